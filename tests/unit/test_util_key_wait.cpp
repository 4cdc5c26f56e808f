// wait_key_or_signal: what the line editor and --live's last screen see, on
// pipes standing in for the terminal and the signalfd.
#include <doctest/doctest.h>
#include <unistd.h>

#include "tpush/util/key_wait.h"

using tpush::util::KeyWait;
using tpush::util::wait_key_or_signal;

namespace {

struct Pipe {
  int fd[2] = {-1, -1};
  Pipe() { REQUIRE(::pipe(fd) == 0); }
  ~Pipe() {
    for (int f : fd)
      if (f >= 0) ::close(f);
  }
  void put(char c) { REQUIRE(::write(fd[1], &c, 1) == 1); }
  void close_writer() {
    ::close(fd[1]);
    fd[1] = -1;
  }
};

}  // namespace

TEST_CASE("key wait: nothing, a key, a signal first, a terminal gone") {
  Pipe keys, signals;
  CHECK(wait_key_or_signal(keys.fd[0], signals.fd[0], 0) == KeyWait::timeout);
  keys.put('a');
  CHECK(wait_key_or_signal(keys.fd[0], signals.fd[0], 0) == KeyWait::key);
  CHECK(wait_key_or_signal(keys.fd[0], -1, 0) == KeyWait::key);
  signals.put('s');
  CHECK(wait_key_or_signal(keys.fd[0], signals.fd[0], 0) == KeyWait::signal);  // before the key
  char c;
  REQUIRE(::read(keys.fd[0], &c, 1) == 1);
  keys.close_writer();
  CHECK(wait_key_or_signal(keys.fd[0], -1, 0) == KeyWait::keys_gone);
}
