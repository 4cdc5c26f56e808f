// A fake ssh::Session and the factory that hands it to jobs (through
// ConnectionSettings::make_session), and a clock the test moves by hand: the
// session jobs' rules (connect deadline, silence, a kept session kept, taken
// and given up, the restart on a fresh one) run with no network.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

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
  bool peer_closed = false;
  bool accept_resume = true;  // the host key is still accepted when a later run takes it
  int advances = 0, ticks = 0, resumed = 0, parked = 0;
  bool abandoned = false;
  std::string endpoint_host;  // the endpoint it was made (or last resumed) for
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
  const std::string& failure_reason() const override { return s_->failure; }
  const std::string& warning() const override { return no_warning_; }
  bool reached() const override { return s_->phase != Phase::resolve; }
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

}  // namespace tpush::test
