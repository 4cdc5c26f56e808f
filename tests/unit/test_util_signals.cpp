// SignalScope: what a signal does to tpush while a run goes on and once it is
// over. Each case runs in a forked child, so a signal that would end tpush
// ends only the child, and the parent reads how it ended.
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include "tpush/util/signals.h"

using tpush::util::drain_signals;
using tpush::util::SignalScope;

namespace {

// How a child that ran `body` and then _exit(body's value) ended: its exit
// status, or 128 + the signal that ended it. The child first puts back the
// default actions doctest's crash report replaced, as tpush has them.
template <typename Body>
int in_child(Body body) {
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, SIG_DFL);
    _exit(body());
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

}  // namespace

TEST_CASE("signal scope: SIGINT, SIGTERM and SIGHUP reach the signalfd, not the default action") {
  CHECK(in_child([] {
          SignalScope scope;
          kill(getpid(), SIGINT);
          kill(getpid(), SIGHUP);
          const auto got = drain_signals(scope.fd());
          return got.interrupt && got.hang_up && !got.terminate ? 7 : 1;
        }) == 7);
}

TEST_CASE("signal scope: a Ctrl-C once the scope has ended cannot turn tpush's exit status into a death by signal") {
  // The second Ctrl-C of `logs -f` came while tpush was exiting: it died of
  // SIGINT after printing a summary that said 130.
  CHECK(in_child([] {
          { SignalScope scope; }
          kill(getpid(), SIGINT);
          kill(getpid(), SIGTERM);
          return 7;
        }) == 7);
  CHECK(in_child([] {
          SignalScope scope;
          kill(getpid(), SIGINT);  // pending, never read, when the scope ends
          return 7;
        }) == 7);
}
