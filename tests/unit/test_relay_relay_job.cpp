// relay::RelayJob on fake sessions whose channels the test answers as the
// workers' control scripts would (relay_control.sh's words): the setup sent,
// the chain's orders handed on, tpush's feed of the first worker, the copy
// stored and checked, the heartbeat, a worker that cannot run the script
// getting its copy over SFTP instead, and a connection lost mid-copy.
#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "test_session_support.h"
#include "tpush/relay/relay_job.h"
#include "tpush/relay/relay_transfer.h"
#include "tpush/util/shared_bytes.h"

namespace {

using namespace std::chrono_literals;
using tpush::fanout::Outcome;
using tpush::relay::RelayJob;
using tpush::relay::RelayTransfer;
using tpush::test::FakeChannelState;

// An ed25519 host key blob, as the session pinned it (wire format).
std::string host_key_blob() {
  std::string blob("\0\0\0\x0bssh-ed25519\0\0\0\x20", 19);
  blob += std::string(32, '\x42');
  return blob;
}

// The copy tpush sends itself, for a worker that cannot run the relay.
class FakeSftpCopy final : public tpush::ssh::SftpTransfer {
 public:
  explicit FakeSftpCopy(int* made) : SftpTransfer(nullptr) { ++*made; }
  void advance() override {
    bytes_done_ = 6;
    phase_ = Phase::done;
  }
};

struct Fixture : tpush::test::FakeRun {
  RelayTransfer transfer;
  std::vector<std::unique_ptr<RelayJob>> jobs;
  int sftp_copies = 0;

  explicit Fixture(std::size_t workers)
      : transfer({{{false, 0644, 0, 0, "", "config.yaml"}, tpush::util::SharedBytes::from_string("hello\n")}},
                 labels(workers), false) {
    sessions_ready();
    sessions.next.host_key = host_key_blob();
    for (std::size_t i = 0; i < workers; ++i) {
      jobs.push_back(std::make_unique<RelayJob>(
          i, tpush::test::endpoint_of("10.0.0." + std::to_string(i + 2)), settings, tpush::fanout::Deadlines{}, transfer, nullptr,
          [this](tpush::ssh::Session&) { return std::make_unique<FakeSftpCopy>(&sftp_copies); }));
      jobs.back()->advance(clock.now);
    }
  }
  static std::vector<std::string> labels(std::size_t n) {
    std::vector<std::string> l;
    for (std::size_t i = 0; i < n; ++i) l.push_back("w" + std::to_string(i));
    return l;
  }
  // Worker `i`'s channel `n` (0: its control script).
  FakeChannelState& channel(std::size_t i, std::size_t n = 0) {
    REQUIRE(sessions.made[i]->channels.size() > n);
    return *sessions.made[i]->channels[n];
  }
  // Every job moves on until none has more to do (a channel takes its
  // input at its next advance, as the real one does when the socket allows).
  void advance_all() {
    for (int round = 0; round < 4; ++round)
      for (auto& j : jobs)
        if (!j->finished()) j->advance(clock.now);
  }
};

}  // namespace

TEST_CASE("relay job: the first worker is fed by tpush and passes the bytes on, and each stores, checks and ends ok saying how its copy came") {
  Fixture f(2);
  for (std::size_t i = 0; i < 2; ++i) {
    FakeChannelState& control = f.channel(i);
    CHECK(control.command == f.transfer.control_command());
    CHECK(control.settings.forward_agent);  // its hop logs in through the agent tpush serves
    control.say(1, "ready /tmp/tpush-relay.w" + std::to_string(i) + "\n");
  }
  f.advance_all();
  // The chain's orders: w0 receives from tpush and passes on to w1, as tpush pinned w1's host key.
  CHECK(f.channel(0).stdin_bytes.rfind(f.transfer.setup(), 0) == 0);
  CHECK(f.channel(0).stdin_bytes.find("go 1 10.0.0.3 22 alice ") != std::string::npos);
  CHECK(f.channel(0).stdin_bytes.find(" ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIEJCQkJC") != std::string::npos);
  CHECK(f.channel(1).stdin_bytes.find("go 1 -\n") != std::string::npos);
  FakeChannelState& feed = f.channel(0, 1);
  CHECK(feed.command == tpush::relay::relay_feed_command("/tmp/tpush-relay.w0", 1));
  CHECK(feed.stdin_bytes == "hello\n");
  CHECK(feed.eof);
  CHECK(f.sessions.made[1]->channels.size() == 1);  // tpush feeds only the first
  feed.exit(0);
  f.channel(0).say(1, "stored 120\nend\n");
  f.channel(1).say(1, "stored 240\nend\n");
  f.advance_all();
  // Everyone stored: every script is told to quit, and ends.
  for (std::size_t i = 0; i < 2; ++i) {
    CHECK(f.channel(i).stdin_bytes.size() >= 5);
    CHECK(f.channel(i).stdin_bytes.substr(f.channel(i).stdin_bytes.size() - 5) == "quit\n");
    CHECK(f.channel(i).eof);
    f.channel(i).exit(0);
  }
  f.advance_all();
  REQUIRE(f.jobs[0]->finished());
  REQUIRE(f.jobs[1]->finished());
  CHECK(f.jobs[0]->result().outcome == Outcome::ok);
  CHECK(f.jobs[0]->result().reason.rfind("ok (from tpush; stored in 0.12 s", 0) == 0);
  CHECK(f.jobs[1]->result().reason.rfind("ok (from w0; stored in 0.24 s", 0) == 0);
  CHECK(f.transfer.sends() == 1);
  CHECK(f.transfer.relayed() == 1);
}

TEST_CASE("relay job: tpush says it is there every 15 s, so a script that hears nothing for 45 s can end on its own") {
  Fixture f(1);
  f.channel(0).say(1, "ready /tmp/tpush-relay.w0\n");
  f.advance_all();
  const auto dashes = [&] {
    const std::string& in = f.channel(0).stdin_bytes;
    std::size_t n = 0;
    for (std::size_t p = 0; (p = in.find("\n-\n", p)) != std::string::npos; ++p) ++n;
    return n;
  };
  // The worker answers keepalives all along: only the script's silence is at stake.
  const auto tick = [&](double at) {
    f.sessions.last().heard = f.clock.to(at);
    f.jobs[0]->tick(f.clock.now);
  };
  tick(1);  // the heartbeat's clock starts
  tick(15.9);
  CHECK(dashes() == 0);
  tick(16);
  CHECK(dashes() == 1);
  tick(31);
  CHECK(dashes() == 2);
}

TEST_CASE("relay job: a worker that cannot run the relay's script gets its copy from tpush over SFTP, saying why") {
  Fixture f(1);
  f.channel(0).say(2, "bash: line 1: mkfifo: command not found\n");
  f.channel(0).exit(127);
  f.advance_all();
  REQUIRE(f.jobs[0]->finished());
  CHECK(f.sftp_copies == 1);
  CHECK(f.jobs[0]->result().outcome == Outcome::ok);
  CHECK(f.jobs[0]->result().reason ==
        "ok (from tpush over SFTP: the relay's script could not run (exit 127: bash: line 1: mkfifo: command not found))");
}

TEST_CASE("relay job: a worker whose connection is lost mid-copy is lost, and its copy is out of the chain") {
  Fixture f(1);
  f.channel(0).say(1, "ready /tmp/tpush-relay.w0\n");
  f.advance_all();
  f.channel(0).fail("connection reset by peer");
  f.advance_all();
  REQUIRE(f.jobs[0]->finished());
  CHECK(f.sftp_copies == 0);  // it had attached: no second copy behind a lost link
  CHECK(f.jobs[0]->result().outcome == Outcome::lost);
  CHECK(f.jobs[0]->result().reason == "connection lost (connection reset by peer)");
}
