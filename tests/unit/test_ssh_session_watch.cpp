// ssh::SessionWatch, the connect deadline and silence rule that a worker's
// job and a jump host share, on a fake session.
#include <doctest/doctest.h>

#include <chrono>
#include <memory>

#include "test_session_support.h"
#include "tpush/ssh/session_watch.h"

namespace {

using namespace std::chrono_literals;
using tpush::ssh::SessionWatch;
using tpush::test::FakeSession;
using tpush::test::FakeSessionState;
using tpush::test::Phase;
using tpush::test::TestClock;

}  // namespace

TEST_CASE("session watch: the connect deadline names its seconds and the phase the session was stuck in") {
  TestClock clock;
  auto state = std::make_shared<FakeSessionState>();
  state->phase = Phase::auth;
  const FakeSession session(state);
  SessionWatch watch(7s, 5s, 3);
  watch.start(clock.now);
  CHECK_FALSE(watch.connect_expired(clock.to(6.9), session));
  CHECK(watch.connect_expired(clock.to(7), session) == "connect timed out after 7s (during authentication)");
}

TEST_CASE("session watch: a wait in tpush's own queue is not the worker's, up to one more connect deadline") {
  TestClock clock;
  auto state = std::make_shared<FakeSessionState>();
  const FakeSession session(state);
  SessionWatch watch(10s, 5s, 3);
  watch.start(clock.now);
  state->waited = 4s;
  CHECK_FALSE(watch.connect_expired(clock.to(13.9), session));
  CHECK(watch.connect_expired(clock.to(14), session));
  state->waited = 1h;
  state->waiting_turn = true;
  CHECK_FALSE(watch.connect_expired(clock.to(19.9), session));
  CHECK(watch.connect_expired(clock.to(20), session) ==
        "connect timed out after 10s (still waiting for a channel of its jump host)");
}

TEST_CASE("session watch: silence is alive interval times alive count, from the later of the last bytes and heard()") {
  TestClock clock;
  auto state = std::make_shared<FakeSessionState>();
  state->phase = Phase::ready;
  state->heard = clock.now;
  const FakeSession session(state);
  SessionWatch watch(10s, 2s, 4);
  CHECK(watch.silence_limit() == 8s);
  CHECK_FALSE(watch.silence_expired(clock.to(7.9), session));
  CHECK(watch.silence_expired(clock.to(8.5), session) == "no response for 8s");
  watch.heard(clock.to(8.5));  // a kept jump host resumed by a later run
  CHECK_FALSE(watch.silence_expired(clock.to(16.4), session));
  CHECK(watch.silence_expired(clock.to(16.5), session) == "no response for 8s");
}
