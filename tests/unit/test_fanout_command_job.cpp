// fanout::CommandJob on a fake session whose channels the test answers as a
// worker would: the command behind its group report, its output and status,
// Ctrl-C and -u through its process group, and a persist master's kept shell
// (started by the first command, carrying the next, declining, lost).
#include <doctest/doctest.h>

#include <chrono>
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <utility>

#include "test_session_support.h"
#include "tpush/fanout/command_job.h"
#include "tpush/ssh/kept_sessions.h"
#include "tpush/ssh/remote_group.h"

namespace {

using namespace std::chrono_literals;
using tpush::fanout::CommandJob;
using tpush::fanout::Deadlines;
using tpush::fanout::Outcome;
using tpush::fanout::Stream;
using tpush::ssh::group_tag;
using tpush::test::FakeChannelState;
using tpush::test::endpoint_of;

// What the workers printed, per stream, as the output layer would get it.
class RecordingSink final : public tpush::fanout::OutputSink {
 public:
  std::map<Stream, std::string> bytes;
  bool ended = false, began = false, accepts = true;

  void data(std::size_t, Stream stream, std::string_view b) override { bytes[stream] += b; }
  void end(std::size_t) override { ended = true; }
  void connected(std::size_t) override { began = true; }
  void flush() override {}
  void notice(std::string) override {}
  bool accepting() const override { return accepts; }
  bool closed() const override { return false; }
  int wake_fd() const override { return -1; }
  void clear_wake() override {}
};

// Plays a worker's kept shell on its fake channel, as kept_shell_loop.sh does.
struct ShellPeer {
  FakeChannelState& channel;

  // The line the shell writes once it is ready, after the hello tag it was given.
  void ready() {
    static const std::regex kHello("set -- '(tpush:shell:[0-9a-f]+:)'");
    std::smatch m;
    REQUIRE(std::regex_search(channel.command, m, kHello));
    channel.say(1, m[1].str() + "ready /run/user/1000/tpush-guard\n");
  }
  // The end tag of the command sent last (its header: lines, group tag, end tag, claim).
  std::string end_tag() const {
    static const std::regex kHeader("(\\d+) (\\S+) (tpush:end:[0-9a-f]+:) (\\S+)\n");
    std::string tag;
    for (std::sregex_iterator it(channel.stdin_bytes.begin(), channel.stdin_bytes.end(), kHeader), end; it != end; ++it)
      tag = (*it)[3].str();
    REQUIRE_FALSE(tag.empty());
    return tag;
  }
  // The command's run: its group, its output, and the markers after it on both streams.
  void run(const std::string& out, const std::string& word) {
    const std::string tag = end_tag();
    channel.say(2, group_tag() + "777\n");
    channel.say(1, out);
    channel.say(1, tag + word + "\n");
    channel.say(2, tag + word + "\n");
  }
};

struct Fixture : tpush::test::FakeRun {
  tpush::ssh::KeptSessions pool{clock.reader()};  // a persist master's, once settings.pool points to it
  RecordingSink out;
  Deadlines deadlines;

  Fixture() { sessions_ready(); }
  // A job for `command` whose session became ready: its work has begun.
  std::unique_ptr<CommandJob> started(const std::string& command, tpush::ssh::Channel::Settings channel = {}) {
    auto job = std::make_unique<CommandJob>(0, endpoint_of("w1"), settings, command, channel, deadlines, out);
    job->advance(clock.now);
    REQUIRE(out.began);
    return job;
  }
  FakeChannelState& channel(std::size_t n = 0) {
    REQUIRE(sessions.last().channels.size() > n);
    return *sessions.last().channels[n];
  }
  // With a persist master: a first command on w1 ran on an exec channel and
  // started the kept shell, which came up; the session is kept with it.
  void keep_a_session_with_its_shell() {
    settings.pool = &pool;
    auto first = started("true");
    FakeChannelState& command = channel(0);
    command.say(2, group_tag() + "100\n");
    command.exit(0);
    first->advance(clock.now);
    REQUIRE(sessions.last().channels.size() == 2);
    CHECK_FALSE(first->finished());  // the shell it started is waited for
    ShellPeer{channel(1)}.ready();
    first->advance(clock.now);
    REQUIRE(first->finished());
    REQUIRE(first->result().outcome == Outcome::ok);
    REQUIRE(sessions.last().parked == 1);
  }
};

}  // namespace

TEST_CASE("command job: the command runs behind its group report, its output, without the tag, and its exit status are the worker's") {
  Fixture f;
  auto job = f.started("grep -c ERROR train.log");
  FakeChannelState& c = f.channel();
  CHECK(c.command.find("grep -c ERROR train.log") != std::string::npos);
  CHECK(c.settings.stdin_watched);  // no input, no persist master: the channel's stdin watches for a hang-up
  c.say(2, group_tag() + "4242\n");
  c.say(1, "17\n");
  c.say(2, "grep: warning\n");
  c.exit(3);
  job->advance(f.clock.now);
  REQUIRE(job->finished());
  CHECK(job->result().outcome == Outcome::failed);
  CHECK(job->result().exit_status == 3);
  CHECK(job->result().reason == "exit 3");
  CHECK(f.out.bytes[Stream::out] == "17\n");
  CHECK(f.out.bytes[Stream::err] == "grep: warning\n");
  CHECK(f.out.ended);
}

TEST_CASE("command job: a command killed by a signal says which, and a lost connection is lost, not failed") {
  Fixture f;
  SUBCASE("killed") {
    auto job = f.started("python train.py");
    f.channel().exit_signal = "KILL";
    f.channel().exit(0);
    job->advance(f.clock.now);
    CHECK(job->result().outcome == Outcome::failed);
    CHECK(job->result().reason == "killed by SIGKILL");
    CHECK(job->result().signal == "KILL");
  }
  SUBCASE("lost") {
    auto job = f.started("python train.py");
    f.channel().say(2, group_tag() + "4242\n");
    job->advance(f.clock.now);
    f.channel().fail("connection reset by peer");
    job->advance(f.clock.now);
    CHECK(job->result().outcome == Outcome::lost);
    CHECK(job->result().reason == "connection lost (connection reset by peer)");
  }
}

TEST_CASE("command job: output waits while the output side is full, and the job says it stopped reading") {
  Fixture f;
  auto job = f.started("cat big.log");
  f.out.accepts = false;
  f.channel().say(1, "line\n");
  job->advance(f.clock.now);
  CHECK(job->paused_for_output());
  CHECK(f.out.bytes[Stream::out].empty());
  f.out.accepts = true;
  job->advance(f.clock.now);
  CHECK_FALSE(job->paused_for_output());
  CHECK(f.out.bytes[Stream::out] == "line\n");
}

TEST_CASE("command job: Ctrl-C goes to the command's process group over a second channel, once its group is known") {
  Fixture f;
  auto job = f.started("sleep 600");
  FakeChannelState& c = f.channel();
  job->advance(f.clock.now);
  job->forward_interrupt();
  // Before the tag: a signal request too (it reaches a non-root login's command), and INT waits for the group.
  CHECK(c.interrupts == 1);
  CHECK(f.sessions.last().channels.size() == 1);
  c.say(2, group_tag() + "4242\n");
  job->advance(f.clock.now);
  REQUIRE(f.sessions.last().channels.size() == 2);
  CHECK(f.channel(1).command == tpush::ssh::group_signal_command(4242, "INT"));
  f.channel(1).exit(0);
  c.exit(130);
  job->advance(f.clock.now);
  REQUIRE(job->finished());
  CHECK(job->result().reason == "exit 130");
}

TEST_CASE("command job: past -u, TERM goes to the process group and the worker is timed out, whatever carries the command") {
  Fixture f;
  f.deadlines.command = 5s;
  std::unique_ptr<CommandJob> job;
  FakeChannelState* carrier = nullptr;
  SUBCASE("an exec channel") {
    job = f.started("sleep 600");
    carrier = &f.channel(0);
    carrier->say(2, group_tag() + "4242\n");
  }
  SUBCASE("the kept shell") {
    f.keep_a_session_with_its_shell();
    job = f.started("sleep 600");
    REQUIRE(f.sessions.last().channels.size() == 2);  // no new channel: the shell took it
    carrier = &f.channel(1);
    CHECK_FALSE(ShellPeer{*carrier}.end_tag().empty());  // the command went to the shell
    carrier->say(2, group_tag() + "4242\n");
  }
  job->advance(f.clock.now);
  const std::size_t before = f.sessions.last().channels.size();
  job->tick(f.clock.to(5));
  REQUIRE(f.sessions.last().channels.size() == before + 1);
  FakeChannelState& stop = *f.sessions.last().channels.back();
  CHECK(stop.command == tpush::ssh::group_signal_command(4242, "TERM"));
  CHECK_FALSE(job->finished());
  stop.exit(0);
  job->advance(f.clock.now);
  REQUIRE(job->finished());
  CHECK(job->result().outcome == Outcome::timed_out);
}

TEST_CASE("command job: with a persist master, the first command starts the kept shell and waits for it, and the next command runs in it") {
  Fixture f;
  f.keep_a_session_with_its_shell();
  auto job = f.started("hostname");
  CHECK(f.sessions.made.size() == 1);  // the kept session, taken up
  CHECK(f.sessions.last().resumed == 1);
  REQUIRE(f.sessions.last().channels.size() == 2);  // no channel of its own
  ShellPeer shell{f.channel(1)};
  CHECK(f.channel(1).stdin_bytes.find("\nhostname\n") != std::string::npos);
  shell.run("w1\n", "0");
  job->advance(f.clock.now);
  REQUIRE(job->finished());
  CHECK(job->result().outcome == Outcome::ok);
  CHECK(job->result().reason == "exit 0");
  CHECK(f.out.bytes[Stream::out] == "w1\n");
  CHECK(f.out.bytes[Stream::err].empty());  // the group's tag and the markers are not output
  CHECK(f.sessions.last().parked == 2);  // kept again, with its shell
}

TEST_CASE("command job: a command the kept shell ran reports a status of 128 + N as signal N only when tpush sent it") {
  Fixture f;
  f.keep_a_session_with_its_shell();
  auto job = f.started("sleep 600");
  ShellPeer shell{f.channel(1)};
  f.channel(1).say(2, group_tag() + "777\n");
  job->advance(f.clock.now);
  job->forward_interrupt();
  REQUIRE(f.sessions.last().channels.size() == 3);
  CHECK(f.channel(2).command == tpush::ssh::group_signal_command(777, "INT"));
  f.channel(2).exit(0);
  const std::string tag = shell.end_tag();
  f.channel(1).say(1, tag + "130\n");
  f.channel(1).say(2, tag + "130\n");
  job->advance(f.clock.now);
  REQUIRE(job->finished());
  CHECK(job->result().reason == "killed by SIGINT");
  CHECK(job->result().signal == "INT");
}

TEST_CASE("command job: a command the kept shell declined (a login file changed) runs on an exec channel as a new login would") {
  Fixture f;
  f.keep_a_session_with_its_shell();
  auto job = f.started("hostname");
  const std::string tag = ShellPeer{f.channel(1)}.end_tag();
  f.channel(1).say(1, tag + "stale\n");
  f.channel(1).say(2, tag + "stale\n");
  f.channel(1).exit(0);  // and the shell leaves
  job->advance(f.clock.now);
  // The command's own channel, and a new kept shell for the next command.
  REQUIRE(f.sessions.last().channels.size() == 4);
  FakeChannelState& fallback = f.channel(2);
  CHECK(fallback.command.find("hostname") != std::string::npos);
  CHECK(fallback.command.find("set -C") == std::string::npos);  // declined: no claim to check
  fallback.say(2, group_tag() + "900\n");
  fallback.say(1, "w1\n");
  fallback.exit(0);
  job->advance(f.clock.now);
  CHECK_FALSE(job->finished());  // the new shell is waited for
  ShellPeer{f.channel(3)}.ready();
  job->advance(f.clock.now);
  REQUIRE(job->finished());
  CHECK(job->result().outcome == Outcome::ok);
  CHECK(f.out.bytes[Stream::out] == "w1\n");
}

TEST_CASE("command job: a command sent to a kept shell that ended before answering runs again only behind its claim") {
  Fixture f;
  f.keep_a_session_with_its_shell();
  auto job = f.started("touch once");
  job->advance(f.clock.now);  // the command goes out on the shell's stdin
  f.channel(1).exit(0);       // and the shell ends with no answer, its session up
  job->advance(f.clock.now);
  REQUIRE(f.sessions.last().channels.size() == 4);  // the command's channel, and a new shell for the next
  FakeChannelState& fallback = f.channel(2);
  ShellPeer{f.channel(3)}.ready();
  CHECK(fallback.command.rfind("(set -C; : > /run/user/1000/tpush-guard/c", 0) == 0);
  CHECK(fallback.command.find("touch once") != std::string::npos);
  SUBCASE("the kept shell had claimed it: not run twice") {
    fallback.exit(255);  // the claim's exit, before any group tag
    job->advance(f.clock.now);
    REQUIRE(job->finished());
    CHECK(job->result().outcome == Outcome::failed);
    CHECK(job->result().reason ==
          "the worker's kept shell ended before the command answered: it may have run, so it was not run again");
  }
  SUBCASE("it had not: it runs once, here") {
    fallback.say(2, group_tag() + "901\n");
    fallback.exit(0);
    job->advance(f.clock.now);
    REQUIRE(job->finished());
    CHECK(job->result().outcome == Outcome::ok);
  }
}
