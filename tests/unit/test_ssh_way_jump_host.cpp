// ssh::JumpHost (ProxyJump in-process) on a fake session to the jump host,
// whose direct-tcpip channels the test answers as the workers' servers would,
// and the run's clock: one login carrying many workers' bytes both ways, EOF
// each way, a worker the jump host cannot reach, and a jump host gone silent.
// The workers' ends are real socketpairs, as in a run.
#include <doctest/doctest.h>

#include <libssh2.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "test_session_support.h"
#include "tpush/ssh/way/jump_pool.h"
#include "tpush/util/pollable.h"

namespace {

using namespace std::chrono_literals;
using tpush::ssh::JumpPool;
using tpush::test::FakeDirectState;
using tpush::test::Phase;

// The run's loop, as far as the jump hosts see it: who registered.
class RecordingReactor final : public tpush::util::Reactor {
 public:
  std::vector<tpush::util::Pollable*> added;
  void add(tpush::util::Pollable& p) override {
    if (std::find(added.begin(), added.end(), &p) == added.end()) added.push_back(&p);
  }
  void remove(tpush::util::Pollable& p) override { std::erase(added, &p); }
  void update(tpush::util::Pollable&) override {}
};

// A worker's way through the jump host, and its end of the socketpair.
struct Worker {
  std::unique_ptr<tpush::ssh::Transport> way;
  int fd = -1;
  ~Worker() {
    if (way) way->close();
    if (fd >= 0) ::close(fd);
  }
  void send(const std::string& bytes) const { REQUIRE(::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size())); }
  // What arrived for it ("" and `eof` when the other side closed).
  std::string receive(bool* eof = nullptr) const {
    char buf[4096];
    const ssize_t n = ::recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    if (eof) *eof = n == 0;
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
  }
};

struct Fixture : tpush::test::FakeRun {
  RecordingReactor loop;
  JumpPool pool{settings};
  std::vector<std::unique_ptr<Worker>> workers;

  Fixture() {
    sessions_ready();
    pool.attach(&loop);
  }
  // A worker at `address` reached through alice@bastion:22.
  Worker& reach(const std::string& address) {
    auto w = std::make_unique<Worker>();
    w->way = pool.route({{"alice@bastion:22", tpush::test::endpoint_of("bastion"), 10s}}, address, 22)();
    w->fd = w->way->open();
    REQUIRE(w->fd >= 0);
    workers.push_back(std::move(w));
    return *workers.back();
  }
  // The loop's turn: every jump host moves what it can.
  void turn() {
    for (auto* p : std::vector(loop.added)) p->advance(clock.now);
  }
  void tick(double at) {
    clock.to(at);
    for (auto* p : std::vector(loop.added)) p->tick(clock.now);
  }
  FakeDirectState& direct(std::size_t n) {
    REQUIRE(sessions.made.size() == 1);
    REQUIRE(sessions.last().directs.size() > n);
    return *sessions.last().directs[n];
  }
};

}  // namespace

TEST_CASE("jump host: one login to the jump host carries each worker's bytes both ways, over a channel to that worker") {
  Fixture f;
  Worker& w5 = f.reach("10.0.0.5");
  Worker& w6 = f.reach("10.0.0.6");
  f.turn();
  REQUIRE(f.sessions.made.size() == 1);  // one login for both
  CHECK(f.sessions.last().endpoint_host == "bastion");
  CHECK(f.loop.added.size() == 1);
  FakeDirectState& to5 = f.direct(0);
  FakeDirectState& to6 = f.direct(1);
  CHECK(to5.host == "10.0.0.5");
  CHECK(to6.host == "10.0.0.6");
  CHECK(to5.port == 22);
  w5.send("SSH-2.0-tpush five\r\n");
  w6.send("SSH-2.0-tpush six\r\n");
  to5.to_worker = "SSH-2.0-OpenSSH_9.2 five\r\n";
  f.turn();
  CHECK(to5.from_worker == "SSH-2.0-tpush five\r\n");
  CHECK(to6.from_worker == "SSH-2.0-tpush six\r\n");
  CHECK(w5.receive() == "SSH-2.0-OpenSSH_9.2 five\r\n");
  CHECK(w6.receive().empty());
}

TEST_CASE("jump host: the worker's server closing reaches the worker as EOF, and the worker closing closes its channel") {
  Fixture f;
  Worker& w = f.reach("10.0.0.5");
  f.turn();
  FakeDirectState& d = f.direct(0);
  d.to_worker = "bye\n";
  d.server_eof = true;
  f.turn();
  CHECK(w.receive() == "bye\n");
  bool eof = false;
  w.receive(&eof);
  CHECK(eof);
  CHECK_FALSE(d.closed);
  ::shutdown(w.fd, SHUT_WR);  // the worker's session is done
  f.turn();
  CHECK(d.closed);
}

TEST_CASE("jump host: a worker the jump host cannot reach fails with the jump host's words, and the others go on") {
  Fixture f;
  f.sessions.next.direct_open_rc = LIBSSH2_ERROR_CHANNEL_FAILURE;
  Worker& w = f.reach("10.0.0.99");
  f.turn();
  bool eof = false;
  w.receive(&eof);
  CHECK(eof);
  CHECK(w.way->failure().find("Channel open failure (connect failed)") != std::string::npos);
  CHECK(w.way->failure().find("10.0.0.99") != std::string::npos);
  CHECK(f.sessions.made.size() == 1);
  CHECK_FALSE(f.sessions.last().abandoned);  // the jump host itself is fine
}

TEST_CASE("jump host: a jump host silent for the alive interval times the count is lost, and every worker through it says so") {
  Fixture f;
  Worker& w = f.reach("10.0.0.5");
  f.turn();
  REQUIRE(f.sessions.last().directs.size() == 1);
  f.tick(14.9);
  bool eof = false;
  w.receive(&eof);
  CHECK_FALSE(eof);
  f.tick(15);
  w.receive(&eof);
  CHECK(eof);
  CHECK(f.sessions.last().abandoned);
  CHECK(f.sessions.last().directs[0]->released);  // freed with the session, not closed over it
  CHECK(w.way->failure() == "jump host alice@bastion:22: connection lost (no response for 15s)");
}

TEST_CASE("jump host: a jump host that cannot be reached fails every worker behind it with its reason") {
  Fixture f;
  f.sessions.next.on_advance = Phase::failed;
  Worker& a = f.reach("10.0.0.5");
  f.turn();
  bool eof = false;
  a.receive(&eof);
  CHECK(eof);
  CHECK(a.way->failure() == "jump host alice@bastion:22: connect refused (127.0.1.9 port 22)");
}
