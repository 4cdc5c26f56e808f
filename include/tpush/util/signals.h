// The one place tpush handles signals. Create it first thing in main, before
// any thread starts: SIGINT, SIGTERM and SIGHUP are blocked in every thread and
// delivered through a signalfd the event loop watches; SIGPIPE is ignored, so a
// vanished reader shows up as EPIPE on write and tpush ends quietly.
#pragma once

#include <signal.h>

namespace tpush::util {

class SignalScope {
 public:
  SignalScope();
  ~SignalScope();
  SignalScope(const SignalScope&) = delete;
  SignalScope& operator=(const SignalScope&) = delete;

  int fd() const { return fd_; }
  // The mask to restore in a child process before exec.
  static void restore_in_child();

 private:
  int fd_ = -1;
  sigset_t old_mask_{};
};

}  // namespace tpush::util
