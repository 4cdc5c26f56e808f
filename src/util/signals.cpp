#include "tpush/util/signals.h"

#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "tpush/util/error.h"

namespace tpush::util {
namespace {

sigset_t handled() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  return set;
}

}  // namespace

SignalScope::SignalScope() {
  signal(SIGPIPE, SIG_IGN);
  const sigset_t set = handled();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  fd_ = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  if (fd_ < 0) throw SetupError(std::string("cannot create a signalfd: ") + std::strerror(errno));
}

// The mask stays as it is: see the header.
SignalScope::~SignalScope() {
  if (fd_ >= 0) close(fd_);
}

JobControlScope::JobControlScope() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTSTP);
  sigaddset(&set, SIGCONT);  // blocked, it still continues the process; the fd then reads it
  pthread_sigmask(SIG_BLOCK, &set, &old_mask_);
  fd_ = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
}

JobControlScope::~JobControlScope() {
  if (fd_ >= 0) close(fd_);
  pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

KeepDispositions::KeepDispositions() {
  for (std::size_t i = 0; i < std::size(kSignals); ++i) sigaction(kSignals[i], nullptr, &saved_[i]);
}

KeepDispositions::~KeepDispositions() {
  for (std::size_t i = 0; i < std::size(kSignals); ++i) sigaction(kSignals[i], &saved_[i], nullptr);
}

BlockAllSignals::BlockAllSignals() {
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old_mask_);
}

BlockAllSignals::~BlockAllSignals() { pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr); }

void restore_default_signals() noexcept {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  signal(SIGPIPE, SIG_DFL);
}

PendingSignals drain_signals(int signal_fd) {
  PendingSignals p;
  signalfd_siginfo info{};
  while (read(signal_fd, &info, sizeof info) == sizeof info) {
    p.interrupt = p.interrupt || info.ssi_signo == SIGINT;
    p.terminate = p.terminate || info.ssi_signo == SIGTERM;
    p.hang_up = p.hang_up || info.ssi_signo == SIGHUP;
  }
  return p;
}

}  // namespace tpush::util
