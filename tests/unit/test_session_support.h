// A fake ssh::Session and the factory that hands it to jobs (through
// ConnectionSettings::make_session), the fake channels it opens for them, and
// a clock the test moves by hand: the session jobs' rules (connect deadline,
// silence, a kept session kept, taken and given up, the restart on a fresh
// one) and what a job does with its channels (a command's output, status,
// signals, its kept shell) run with no network.
#pragma once

#include <libssh2.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "tpush/ssh/channel.h"
#include "tpush/ssh/session.h"

namespace tpush::test {

using Phase = ssh::Session::Phase;

// The time the test says it is, read through ConnectionSettings::now: the
// jobs read it between calls, as they read the scheduler's clock in a run.
struct TestClock {
  const ssh::Clock::time_point start = ssh::Clock::time_point{} + std::chrono::hours(1);
  ssh::Clock::time_point now = start;
  // Moves the clock to `seconds` after the start and says what time that is.
  ssh::Clock::time_point to(double seconds) {
    now = start + std::chrono::duration_cast<ssh::Clock::duration>(std::chrono::duration<double>(seconds));
    return now;
  }
  ssh::Now reader() {
    return [this] { return now; };
  }
};

// What a fake channel does and what was done to it: the test plays the
// worker's side (output, the exit, a failure) and reads what the job sent.
struct FakeChannelState {
  using Phase = ssh::Channel::Phase;

  std::string command;
  ssh::Channel::Settings settings;
  Phase phase = Phase::open;
  bool hold_open = false;  // the open is not answered yet: it stays in Phase::open
  // The worker's side, taken by the next advance() while the sink accepts.
  std::vector<std::pair<int, std::string>> output;
  std::optional<int> exit_status;  // it exits once its output is taken
  std::string exit_signal;
  std::optional<std::string> failure;  // it fails at the next advance()
  bool hung_up = false;
  // What the job did.
  std::string stdin_bytes;  // the input and write_first()'s bytes, as sent
  bool eof = false;
  bool gated = false;
  bool held = false;
  bool paused = false;
  bool released = false;
  int interrupts = 0, advances = 0;
  std::vector<std::string> signals;
  std::uint64_t input_offset = 0;
  std::string first;  // write_first()'s, not yet sent

  void say(int stream, std::string bytes) { output.emplace_back(stream, std::move(bytes)); }
  void exit(int status) { exit_status = status; }
  void fail(std::string why, bool hang_up = true) {
    failure = std::move(why);
    hung_up = hang_up;
  }
};

class FakeChannel final : public ssh::Channel {
 public:
  explicit FakeChannel(std::shared_ptr<FakeChannelState> state) : c_(std::move(state)) {
    c_->gated = c_->settings.stdin_gated;
  }

  void advance(const Sink& sink) override {
    ++c_->advances;
    if (ended()) return;
    if (c_->failure) {
      c_->phase = Phase::failed;
      return;
    }
    if (c_->phase == Phase::open) {
      if (c_->hold_open) return;
      c_->phase = Phase::stream;
    }
    feed();
    c_->paused = false;
    while (!c_->output.empty()) {
      if (!sink.can_accept()) {
        c_->paused = true;
        return;
      }
      auto [stream, bytes] = std::move(c_->output.front());
      c_->output.erase(c_->output.begin());
      sink.data(stream, bytes);
    }
    if (c_->exit_status) c_->phase = Phase::done;
  }
  Phase phase() const override { return c_->phase; }
  util::Wait wait() const override { return util::Wait::read; }
  bool paused() const override { return c_->paused; }
  std::uint64_t input_offset() const override { return c_->input_offset; }
  void interrupt_remote() override { ++c_->interrupts; }
  void send_signal(std::string name) override { c_->signals.push_back(std::move(name)); }
  void resize(int, int) override {}
  bool requests_pending() const override { return false; }
  int exit_status() const override { return c_->exit_status.value_or(-1); }
  const std::string& exit_signal() const override { return c_->exit_signal; }
  const std::string& error() const override { return c_->failure ? *c_->failure : none_; }
  bool server_hung_up() const override { return c_->failure && c_->hung_up; }
  bool command_sent() const override { return c_->phase != Phase::open; }
  bool agent_forwarded() const override { return c_->settings.forward_agent; }
  const std::string& agent_refusal() const override { return none_; }
  void hold_input(bool held) override { c_->held = held; }
  void write_first(std::string bytes) override { c_->first += bytes; }
  void open_gate() override { c_->gated = false; }
  void end_input() override {
    c_->first.clear();
    c_->gated = false;
    c_->eof = true;
  }
  void release() override { c_->released = true; }

 private:
  // Takes what the job has for stdin now, as the real channel writes it.
  void feed() {
    c_->stdin_bytes += std::exchange(c_->first, {});
    if (c_->gated || c_->eof || c_->held) return;
    const ssh::InputSource* in = c_->settings.input;
    if (!in) {
      c_->eof = !c_->settings.stdin_watched;
      return;
    }
    const std::string_view more = in->peek(c_->input_offset);
    c_->stdin_bytes += more;
    c_->input_offset += more.size();
    c_->eof = in->at_end(c_->input_offset);
  }

  std::shared_ptr<FakeChannelState> c_;
  std::string none_;
};

// A fake direct-tcpip channel (a jump host's way to a worker): the test
// plays the worker's server (what it sends, its EOF, a refused write) and
// reads what the jump host passed on.
struct FakeDirectState {
  std::string host;
  std::uint16_t port = 0;
  std::string from_worker;  // what the jump host wrote into the channel
  std::string to_worker;    // what the worker's server sends, not yet read
  bool server_eof = false;  // the server sent EOF, after to_worker
  std::optional<int> write_error;  // a LIBSSH2_ERROR_* every write returns
  bool closed = false, released = false;
};

class FakeDirectChannel final : public ssh::DirectChannel {
 public:
  explicit FakeDirectChannel(std::shared_ptr<FakeDirectState> state) : d_(std::move(state)) {}

  long read(char* buffer, std::size_t size) override {
    if (d_->to_worker.empty()) return d_->server_eof ? 0 : LIBSSH2_ERROR_EAGAIN;
    const std::size_t n = std::min(size, d_->to_worker.size());
    d_->to_worker.copy(buffer, n);
    d_->to_worker.erase(0, n);
    return static_cast<long>(n);
  }
  long write(const char* data, std::size_t size) override {
    if (d_->write_error) return *d_->write_error;
    d_->from_worker.append(data, size);
    return static_cast<long>(size);
  }
  bool eof() const override { return d_->server_eof && d_->to_worker.empty(); }
  int close() override {
    d_->closed = true;
    return 0;
  }
  void release() override { d_->released = true; }

 private:
  std::shared_ptr<FakeDirectState> d_;
};

// What a fake session does and what was done to it; the test keeps a handle
// on it after the job (or a pool) took the session itself.
struct FakeSessionState {
  Phase phase = Phase::resolve;
  // What the next advance() moves it to (failed: with `failure`).
  Phase on_advance = Phase::handshake;
  std::string failure = "connect refused (127.0.1.9 port 22)";
  std::string path_failure;  // the way there failed: the cause of a loss
  ssh::Clock::time_point heard{};
  ssh::Clock::duration stalled{}, waited{};
  bool waiting_turn = false;
  bool greeted = false;  // the server's banner came
  bool peer_closed = false;
  bool accept_resume = true;  // the host key is still accepted when a later run takes it
  int advances = 0, ticks = 0, resumed = 0, parked = 0;
  bool abandoned = false;
  std::string endpoint_host;  // the endpoint it was made (or last resumed) for
  bool sending = false;        // a packet half sent
  std::string host_key = "fake host key blob";
  std::vector<std::shared_ptr<FakeChannelState>> channels;  // opened on it, in order
  // Direct-tcpip channels: what an open returns (0: open at once; EAGAIN: not
  // answered yet; an error: refused, with `last_error`'s words), and those opened.
  int direct_open_rc = 0;
  std::string last_error = "Channel open failure (connect failed)";
  std::vector<std::shared_ptr<FakeDirectState>> directs;

  // The channel opened last whose command holds `text`.
  FakeChannelState* channel_with(const std::string& text) {
    for (auto it = channels.rbegin(); it != channels.rend(); ++it)
      if ((*it)->command.find(text) != std::string::npos) return it->get();
    return nullptr;
  }
};

class FakeSession final : public ssh::Session {
 public:
  explicit FakeSession(std::shared_ptr<FakeSessionState> state) : s_(std::move(state)) {}

  Phase advance() override {
    ++s_->advances;
    if (s_->phase != Phase::ready && s_->phase != Phase::failed) s_->phase = s_->on_advance;
    return s_->phase;
  }
  Phase phase() const override { return s_->phase; }
  int fd() const override { return s_->abandoned ? -1 : 1000; }
  util::Wait wait() const override { return util::Wait::read; }
  LIBSSH2_SESSION* session() const override { return nullptr; }
  std::unique_ptr<ssh::Channel> open_channel(std::string command, ssh::Channel::Settings settings) override {
    auto c = std::make_shared<FakeChannelState>();
    c->command = std::move(command);
    c->settings = settings;
    s_->channels.push_back(c);
    return std::make_unique<FakeChannel>(c);
  }
  bool sending() const override { return s_->sending; }
  std::unique_ptr<ssh::DirectChannel> open_direct(const std::string& host, std::uint16_t port, int* rc) override {
    *rc = s_->direct_open_rc;
    if (*rc != 0) return nullptr;
    auto d = std::make_shared<FakeDirectState>();
    d->host = host;
    d->port = port;
    s_->directs.push_back(d);
    return std::make_unique<FakeDirectChannel>(d);
  }
  std::string last_error() const override { return s_->last_error; }
  std::string host_key() const override { return s_->host_key; }
  const std::string& failure_reason() const override { return s_->failure; }
  const std::string& warning() const override { return no_warning_; }
  bool reached() const override { return s_->phase != Phase::resolve; }
  bool greeted() const override { return s_->greeted; }
  std::string path_failure() const override { return s_->path_failure; }
  void new_turn() override {}
  void note_tick(ssh::Clock::time_point) override {}
  ssh::Clock::time_point heard_from() const override { return s_->heard; }
  ssh::Clock::duration stalled() const override { return s_->stalled; }
  ssh::Clock::duration waited() const override { return s_->waited; }
  bool waiting_turn() const override { return s_->waiting_turn; }
  void tick(ssh::Clock::time_point) override { ++s_->ticks; }
  void abandon() override { s_->abandoned = true; }
  void park(util::ChildReaper*) override { ++s_->parked; }
  bool resume(ssh::Endpoint endpoint, const ssh::ConnectionSettings&) override {
    ++s_->resumed;
    s_->endpoint_host = endpoint.host;
    return s_->accept_resume;
  }
  bool peer_closed() const override { return s_->peer_closed || s_->abandoned; }

 private:
  std::shared_ptr<FakeSessionState> s_;
  std::string no_warning_;
};

// Makes fake sessions and keeps a handle on each, in order.
class FakeSessions {
 public:
  // How each new session behaves: copied from this.
  FakeSessionState next;
  std::vector<std::shared_ptr<FakeSessionState>> made;

  ssh::SessionFactory factory() {
    return [this](ssh::Endpoint endpoint, const ssh::ConnectionSettings&) -> std::unique_ptr<ssh::Session> {
      auto state = std::make_shared<FakeSessionState>(next);
      state->endpoint_host = endpoint.host;
      made.push_back(state);
      return std::make_unique<FakeSession>(state);
    };
  }
  FakeSessionState& last() { return *made.back(); }
};

// What a job test starts from: the run's settings, reading the test's clock
// and making fake sessions.
struct FakeRun {
  TestClock clock;
  FakeSessions sessions;
  ssh::ConnectionSettings settings;

  FakeRun() {
    settings.now = clock.reader();
    settings.make_session = sessions.factory();
  }
  // Sessions made from now on are ready at their first advance, heard from now.
  void sessions_ready() {
    sessions.next.on_advance = Phase::ready;
    sessions.next.heard = clock.now;
  }
};

// Where a job goes: `host`, as alice.
inline ssh::Endpoint endpoint_of(const std::string& host) {
  ssh::Endpoint e;
  e.host = host;
  e.user = "alice";
  return e;
}

}  // namespace tpush::test
