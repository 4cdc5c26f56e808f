// The one place tpush handles signals. Create it first thing in main, before
// any thread starts: SIGINT, SIGTERM and SIGHUP are blocked in every thread and
// delivered through a signalfd the event loop watches; SIGPIPE is ignored, so a
// vanished reader shows up as EPIPE on write and tpush ends quietly. Children
// get the defaults back (restore_default_signals, below) before they exec.
// Nothing outside src/util/signals.cpp touches signal masks or dispositions
// (tests/check_rules.py keeps it so).
//
// The three stay blocked after a SignalScope ends. By then the run is over
// and its exit status decided; a signal that comes while the process winds
// down (a second Ctrl-C while the sessions close, a SIGTERM during the
// sanitizers' exit checks) stays pending and goes with the process, rather
// than turning the status the run earned into a death by signal. In a persist
// master the master's own scope goes on reading them.
#pragma once

#include <signal.h>

#include <iterator>

namespace tpush::util {

class SignalScope {
 public:
  SignalScope();
  ~SignalScope();
  SignalScope(const SignalScope&) = delete;
  SignalScope& operator=(const SignalScope&) = delete;

  int fd() const { return fd_; }

 private:
  int fd_ = -1;
};

// Ctrl-Z (SIGTSTP) and fg/bg (SIGCONT) taken through a signalfd too, for a
// persist client while a master runs its command: it tells the master to pause
// before stopping itself (raise SIGSTOP), and to go on when continued.
class JobControlScope {
 public:
  JobControlScope();
  ~JobControlScope();
  JobControlScope(const JobControlScope&) = delete;
  JobControlScope& operator=(const JobControlScope&) = delete;

  int fd() const { return fd_; }

 private:
  int fd_ = -1;
  sigset_t old_mask_{};
};

// Which of SignalScope's signals a signalfd held, read until it had no more.
struct PendingSignals {
  bool interrupt = false;  // SIGINT
  bool terminate = false;  // SIGTERM
  bool hang_up = false;    // SIGHUP
};
PendingSignals drain_signals(int signal_fd);

// Every signal blocked in this thread while it lives: a thread started inside
// inherits the mask and so never takes a signal (the name lookups' helpers).
class BlockAllSignals {
 public:
  BlockAllSignals();
  ~BlockAllSignals();
  BlockAllSignals(const BlockAllSignals&) = delete;
  BlockAllSignals& operator=(const BlockAllSignals&) = delete;

 private:
  sigset_t old_mask_{};
};

// In a forked child, before exec: what SignalScope changed, back at the
// defaults (nothing blocked, SIGPIPE's default action). Async-signal-safe.
void restore_default_signals() noexcept;

// Libraries that set signal handlers of their own where none is set (ncurses'
// newterm() and endwin(): SIGINT, SIGTERM, SIGTSTP, SIGWINCH) are called inside
// one of these: every disposition it saw is put back when it ends, so the
// signals stay this file's.
class KeepDispositions {
 public:
  KeepDispositions();
  ~KeepDispositions();
  KeepDispositions(const KeepDispositions&) = delete;
  KeepDispositions& operator=(const KeepDispositions&) = delete;

 private:
  static constexpr int kSignals[] = {SIGINT, SIGTERM, SIGTSTP, SIGWINCH};
  struct sigaction saved_[std::size(kSignals)] {};
};

}  // namespace tpush::util
