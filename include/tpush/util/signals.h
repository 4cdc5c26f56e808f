// The one place tpush handles signals. Create it first thing in main, before
// any thread starts: SIGINT, SIGTERM and SIGHUP are blocked in every thread and
// delivered through a signalfd the event loop watches; SIGPIPE is ignored, so a
// vanished reader shows up as EPIPE on write and tpush ends quietly. Children
// get the defaults back in util/child_process.cpp.
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
  sigset_t old_mask_{};
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
