// KeptSessions (ssh/kept_sessions): ready sessions kept between runs, on fake
// sessions and the test's clock.
#include <doctest/doctest.h>

#include <memory>

#include "test_session_support.h"
#include "tpush/ssh/kept_sessions.h"

namespace {

using tpush::ssh::KeptSessions;
using tpush::test::FakeSession;
using tpush::test::FakeSessionState;
using tpush::test::TestClock;

std::unique_ptr<FakeSession> ready_session(std::shared_ptr<FakeSessionState>& state) {
  state = std::make_shared<FakeSessionState>();
  state->phase = tpush::test::Phase::ready;
  return std::make_unique<FakeSession>(state);
}

}  // namespace

TEST_CASE("KeptSessions: a session given back is parked, idle since the pool's clock says, and taken newest first") {
  TestClock clock;
  KeptSessions pool(clock.reader());
  std::shared_ptr<FakeSessionState> first, second;
  clock.to(5);
  pool.give("alice@w0:22", ready_session(first), nullptr);
  clock.to(9);
  pool.give("alice@w0:22", ready_session(second), nullptr);
  CHECK(first->parked == 1);
  CHECK(second->parked == 1);
  REQUIRE(pool.held().size() == 2);
  CHECK(pool.held()[0].idle_since == clock.start + std::chrono::seconds(5));
  CHECK(pool.held()[1].idle_since == clock.start + std::chrono::seconds(9));

  KeptSessions::Kept kept = pool.take("alice@w0:22");
  REQUIRE(kept.connection);
  kept.connection->abandon();
  CHECK(second->abandoned);  // the newest
  CHECK_FALSE(first->abandoned);
  CHECK(pool.size() == 1);
  CHECK_FALSE(pool.take("bob@w0:22").connection);
}

TEST_CASE("KeptSessions: a session whose peer hung up is never handed out, and goes at the next tick") {
  TestClock clock;
  KeptSessions pool(clock.reader());
  std::shared_ptr<FakeSessionState> state;
  pool.give("alice@w0:22", ready_session(state), nullptr);
  CHECK(pool.holds("alice@w0:22"));
  state->peer_closed = true;
  CHECK_FALSE(pool.holds("alice@w0:22"));
  pool.tick(clock.to(1));
  CHECK(pool.size() == 0);
}
