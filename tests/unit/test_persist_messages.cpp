// The persist client/master messages (persist/messages): fields and descriptors
// over a SOCK_SEQPACKET socketpair, as the two processes exchange them.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tpush/persist/messages.h"

using namespace tpush::persist;

namespace {

struct Pair {
  int a = -1, b = -1;
  Pair() {
    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) == 0);
    a = fds[0];
    b = fds[1];
  }
  ~Pair() {
    ::close(a);
    if (b >= 0) ::close(b);
  }
};

}  // namespace

TEST_CASE("persist messages: fields keep empty ones, bytes and order, boundaries hold") {
  Pair p;
  REQUIRE(send_message(p.a, {"run", "", "a b\tc", std::string("x\xff", 2)}));
  REQUIRE(send_message(p.a, {"exit", "130"}));
  auto m = receive_message(p.b);
  REQUIRE(m);
  CHECK(m->fields == std::vector<std::string>{"run", "", "a b\tc", std::string("x\xff", 2)});
  CHECK(m->fds.empty());
  m = receive_message(p.b);
  REQUIRE(m);
  CHECK(m->fields == std::vector<std::string>{"exit", "130"});
}

TEST_CASE("persist messages: descriptors arrive as new descriptors of the same files") {
  Pair p;
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  REQUIRE(send_message(p.a, {"run"}, {pipe_fds[1]}));
  ::close(pipe_fds[1]);
  auto m = receive_message(p.b);
  REQUIRE(m);
  REQUIRE(m->fds.size() == 1);
  CHECK((::fcntl(m->fds[0], F_GETFD) & FD_CLOEXEC) != 0);  // never leaks into children
  REQUIRE(::write(m->fds[0], "hi", 2) == 2);
  close_fds(*m);
  CHECK(m->fds.empty());
  char buf[4] = {};
  CHECK(::read(pipe_fds[0], buf, sizeof buf) == 2);  // the write end is closed everywhere now
  CHECK(std::string(buf) == "hi");
  CHECK(::read(pipe_fds[0], buf, sizeof buf) == 0);
  ::close(pipe_fds[0]);
}

TEST_CASE("persist messages: the end of the peer, and a message that is not one") {
  Pair p;
  REQUIRE(::send(p.a, "no terminator", 13, 0) == 13);  // a field must end with NUL
  CHECK_FALSE(receive_message(p.b));
  CHECK(errno == EMSGSIZE);
  ::close(p.b);
  p.b = -1;
  CHECK_FALSE(send_message(p.a, {"hello"}));
}

TEST_CASE("persist messages: the peer's credentials") {
  Pair p;
  const auto peer = peer_of(p.a);
  REQUIRE(peer);
  CHECK(peer->uid == ::getuid());
  CHECK(peer->pid == ::getpid());
}
