// fanout::SessionJob's rules, on a fake session and a clock the test moves:
// the connect deadline, silence, a persist master's kept sessions (kept, taken
// up, given up) and the restart on a fresh session when a kept one broke.
#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <string>
#include <utility>

#include "test_session_support.h"
#include "tpush/fanout/session_job.h"
#include "tpush/ssh/kept_sessions.h"

namespace {

using namespace std::chrono_literals;
using tpush::fanout::Deadlines;
using tpush::fanout::Outcome;
using tpush::test::endpoint_of;
using tpush::test::Phase;

// Work that does what the test says: the job's own rules are what is tested.
class ScriptedWorkJob final : public tpush::fanout::SessionJob {
 public:
  ScriptedWorkJob(tpush::ssh::Endpoint endpoint, const tpush::ssh::ConnectionSettings& settings, Deadlines deadlines)
      : SessionJob(0, std::move(endpoint), settings, deadlines) {}

  int starts = 0, resets = 0, releases = 0;
  bool done = false;              // the next advance finishes it, ok
  bool fails = false;             // the next advance finds it failed (restarted when it may be)
  bool clean = true;              // it ended cleanly on the session
  bool may_start_again = false;   // it asked the worker for nothing yet
  bool paused = false;            // stopped reading: the output is congested
  bool resumes = false;           // the next advance reads again: the output drained
  bool needs_last_words = false;  // -u: asks for time to send TERM

  using SessionJob::kept_shell;

 private:
  void start_work() override { ++starts; }
  void advance_work() override {
    if (std::exchange(resumes, false)) paused = false;
    if (fails) {
      if (restart_on_fresh_session()) return;
      return finish(Outcome::failed, "the work failed");
    }
    if (done) finish(Outcome::ok, "exit 0", 0);
  }
  tpush::util::Wait work_wait() const override { return tpush::util::Wait::read; }
  bool work_paused() const override { return paused; }
  bool before_timeout() override { return needs_last_words; }
  void release_work() override { ++releases; }
  bool work_clean() const override { return clean; }
  bool work_may_start_again() const override { return may_start_again; }
  void reset_work() override {
    ++resets;
    fails = false;  // what failed was the old session's
  }
};

Deadlines deadlines() {
  Deadlines d;
  d.connect = 10s;
  d.alive_interval = 5s;
  d.alive_count = 3;
  return d;
}

struct Fixture : tpush::test::FakeRun {
  tpush::ssh::KeptSessions pool;  // a persist master's, once settings.pool points to it
  std::unique_ptr<ScriptedWorkJob> job(const std::string& host = "w1") {
    return std::make_unique<ScriptedWorkJob>(endpoint_of(host), settings, deadlines());
  }
  // A job whose session became ready at the clock's time.
  std::unique_ptr<ScriptedWorkJob> working_job(const std::string& host = "w1") {
    sessions_ready();
    auto j = job(host);
    j->advance(clock.now);
    REQUIRE(j->starts == 1);
    return j;
  }
  // With a persist master: a first run on `host` whose work ended cleanly, its
  // session kept.
  void keep_a_session(const std::string& host = "w1") {
    settings.pool = &pool;
    auto first = working_job(host);
    first->done = true;
    first->advance(clock.now);
  }
};

}  // namespace

TEST_CASE("session job: a worker still connecting after --connect-timeout is timed out, naming the seconds and the phase") {
  Fixture f;
  auto job = f.job();
  job->advance(f.clock.now);
  job->tick(f.clock.to(9.9));
  CHECK_FALSE(job->finished());
  job->tick(f.clock.to(10));
  REQUIRE(job->finished());
  CHECK(job->result().outcome == Outcome::timed_out);
  CHECK(job->result().reason == "connect timed out after 10s (during SSH handshake)");
  CHECK(f.sessions.last().abandoned);
}

TEST_CASE("session job: time tpush itself was stalled (Ctrl-Z, a suspended laptop) does not count against the connect deadline") {
  Fixture f;
  auto job = f.job();
  job->advance(f.clock.now);
  f.sessions.last().stalled = 5s;
  job->tick(f.clock.to(14.9));
  CHECK_FALSE(job->finished());
  job->tick(f.clock.to(15));
  CHECK(job->result().outcome == Outcome::timed_out);
}

TEST_CASE("session job: a worker waiting its turn for its jump host's channel gets one more connect deadline for the wait, and says so") {
  Fixture f;
  auto job = f.job();
  job->advance(f.clock.now);
  f.sessions.last().waited = 60s;  // a queue that never moves
  f.sessions.last().waiting_turn = true;
  job->tick(f.clock.to(19.9));
  CHECK_FALSE(job->finished());
  job->tick(f.clock.to(20));
  CHECK(job->result().outcome == Outcome::timed_out);
  CHECK(job->result().reason == "connect timed out after 10s (still waiting for a channel of its jump host)");
}

TEST_CASE("session job: the stages of its handshake that wait on the server are counted for the pace") {
  Fixture f;
  f.sessions.next.on_advance = Phase::connect;
  auto job = f.job();
  job->advance(f.clock.now);
  CHECK(job->setup_stage() == 0);  // TCP's connect under way
  f.sessions.last().on_advance = Phase::handshake;
  job->advance(f.clock.now);
  CHECK(job->setup_stage() == 1);  // TCP answered (the server's kernel)
  f.sessions.last().greeted = true;
  job->advance(f.clock.now);
  CHECK(job->setup_stage() == 2);  // sshd's banner came
  f.sessions.last().on_advance = Phase::host_key;
  job->advance(f.clock.now);
  CHECK(job->setup_stage() == 3);  // keys exchanged: its host key is tpush's to check
  f.sessions.last().on_advance = Phase::auth;
  job->advance(f.clock.now);
  CHECK(job->setup_stage() == 3);
  CHECK(job->connecting());
  f.sessions.last().on_advance = Phase::ready;
  job->advance(f.clock.now);
  CHECK_FALSE(job->connecting());  // the handshake is done: the pace hears of it as completed
}

TEST_CASE("session job: a worker that cannot be connected to is unreachable, with the session's reason") {
  Fixture f;
  f.sessions.next.on_advance = Phase::failed;
  auto job = f.job();
  job->advance(f.clock.now);
  REQUIRE(job->finished());
  CHECK(job->result().outcome == Outcome::unreachable);
  CHECK(job->result().reason == "connect refused (127.0.1.9 port 22)");
  CHECK(job->starts == 0);
}

TEST_CASE("session job: a worker silent for --alive-interval times the alive count is reported lost, naming the seconds") {
  Fixture f;
  auto job = f.working_job();
  job->tick(f.clock.to(14.9));
  CHECK_FALSE(job->finished());
  job->tick(f.clock.to(15));
  REQUIRE(job->finished());
  CHECK(job->result().outcome == Outcome::lost);
  CHECK(job->result().reason == "connection lost (no response for 15s)");
}

TEST_CASE("session job: silence counts from the last bytes the worker sent") {
  Fixture f;
  auto job = f.working_job();
  f.sessions.last().heard = f.clock.to(10);
  job->tick(f.clock.to(24.9));
  CHECK_FALSE(job->finished());
  job->tick(f.clock.to(26));
  CHECK(job->result().outcome == Outcome::lost);
  CHECK(job->result().reason == "connection lost (no response for 16s)");
}

TEST_CASE("session job: silence while tpush stopped reading (congested output) is not the worker's, and counts again from the resume") {
  Fixture f;
  auto job = f.working_job();
  job->paused = true;
  job->tick(f.clock.to(60));
  CHECK_FALSE(job->finished());
  job->resumes = true;
  job->advance(f.clock.to(60));
  job->tick(f.clock.to(74.9));
  CHECK_FALSE(job->finished());
  job->tick(f.clock.to(75));
  CHECK(job->result().outcome == Outcome::lost);
}

TEST_CASE("session job: a worker lost because its way there failed names that cause") {
  Fixture f;
  auto job = f.working_job();
  f.sessions.last().path_failure = "jump host alice@bastion:22: connection lost (no response for 15s)";
  job->tick(f.clock.to(15));
  CHECK(job->result().reason == "connection lost (jump host alice@bastion:22: connection lost (no response for 15s))");
}

TEST_CASE("session job: past -u the work gets its last words in before the hang-up, then is timed out") {
  Fixture f;
  Deadlines d = deadlines();
  d.command = 30s;
  f.sessions.next.on_advance = Phase::ready;
  auto job = std::make_unique<ScriptedWorkJob>(endpoint_of("w1"), f.settings, d);
  job->needs_last_words = true;
  job->advance(f.clock.now);
  for (double t = 1; t < 30; t += 1) {
    f.sessions.last().heard = f.clock.to(t);
    job->tick(f.clock.to(t));
  }
  CHECK_FALSE(job->finished());
  job->tick(f.clock.to(30));
  CHECK_FALSE(job->finished());  // TERM is on its way
  job->tick(f.clock.to(31.9));
  CHECK_FALSE(job->finished());
  job->tick(f.clock.to(32));
  REQUIRE(job->finished());
  CHECK(job->result().outcome == Outcome::timed_out);
  CHECK(job->result().reason == "timed out after 30s");
}

TEST_CASE("session job: the run's clock, not the wall clock, times the result") {
  Fixture f;
  auto job = f.working_job();
  f.clock.to(42);
  job->done = true;
  job->advance(f.clock.now);
  REQUIRE(job->finished());
  CHECK(job->result().seconds == doctest::Approx(42.0));
}

// --- a persist master's kept sessions -------------------------------------------

TEST_CASE("session job: with a persist master, a session whose work ended cleanly is kept for the next run") {
  Fixture f;
  f.settings.pool = &f.pool;
  auto job = f.working_job();
  job->done = true;
  job->advance(f.clock.now);
  REQUIRE(job->result().outcome == Outcome::ok);
  CHECK(f.pool.holds("alice@w1:22"));
  CHECK(f.sessions.last().parked == 1);
  CHECK_FALSE(f.sessions.last().abandoned);
}

TEST_CASE("session job: a session whose work did not end cleanly is closed, not kept") {
  Fixture f;
  f.settings.pool = &f.pool;
  auto job = f.working_job();
  job->clean = false;
  job->done = true;
  job->advance(f.clock.now);
  CHECK_FALSE(f.pool.holds("alice@w1:22"));
  CHECK(f.sessions.last().abandoned);
}

TEST_CASE("session job: without a persist master the session is closed when the work ends") {
  Fixture f;
  auto job = f.working_job();
  job->done = true;
  job->advance(f.clock.now);
  CHECK(f.sessions.last().abandoned);
  CHECK(f.sessions.last().parked == 0);
}

TEST_CASE("session job: the next run on the worker takes the kept session, its host key checked again, instead of logging in") {
  Fixture f;
  f.keep_a_session();
  REQUIRE(f.pool.holds("alice@w1:22"));

  auto second = f.job();
  CHECK(f.sessions.made.size() == 1);  // no new session
  CHECK(f.sessions.last().resumed == 1);
  CHECK_FALSE(f.pool.holds("alice@w1:22"));  // lent to this job
  second->advance(f.clock.now);
  CHECK(second->starts == 1);  // the work starts at once, on the kept session
}

TEST_CASE("session job: a kept session whose host key is no longer accepted is not used: the worker is connected to afresh") {
  Fixture f;
  f.keep_a_session();
  f.sessions.last().accept_resume = false;

  auto second = f.job();
  CHECK(f.sessions.made.size() == 2);
  CHECK(f.sessions.made[0]->resumed == 1);
}

TEST_CASE("session job: a kept session the worker closed meanwhile is not taken") {
  Fixture f;
  f.keep_a_session();
  f.sessions.last().peer_closed = true;

  auto second = f.job();
  CHECK(f.sessions.made.size() == 2);
  CHECK(f.sessions.made[0]->resumed == 0);
}

TEST_CASE("session job: a kept session for another worker or user is not taken") {
  Fixture f;
  f.keep_a_session("w1");

  auto second = f.job("w2");
  CHECK(f.sessions.made.size() == 2);
  CHECK(f.sessions.made[0]->resumed == 0);
  CHECK(f.pool.holds("alice@w1:22"));
}

// --- the restart on a fresh session ---------------------------------------------

namespace {

// A job working on a session a persist master kept from an earlier run.
std::unique_ptr<ScriptedWorkJob> job_on_kept_session(Fixture& f) {
  f.keep_a_session();
  REQUIRE(f.pool.holds("alice@w1:22"));
  auto job = f.job();
  job->advance(f.clock.now);
  REQUIRE(job->starts == 1);
  REQUIRE(f.sessions.made.size() == 1);
  return job;
}

}  // namespace

TEST_CASE("session job: work that a kept session left silent before it asked the worker anything runs again on a fresh session") {
  Fixture f;
  auto job = job_on_kept_session(f);
  job->may_start_again = true;
  f.sessions.next.heard = f.clock.to(15);
  job->tick(f.clock.to(15));
  CHECK_FALSE(job->finished());
  CHECK(job->resets == 1);
  REQUIRE(f.sessions.made.size() == 2);
  CHECK(f.sessions.made[0]->abandoned);
  CHECK(job->starts == 2);  // the fresh session was ready at once: the work started again on it
  CHECK(f.sessions.made[1]->endpoint_host == "w1");
}

TEST_CASE("session job: work on a kept session that failed before it asked the worker anything runs again on a fresh session") {
  Fixture f;
  auto job = job_on_kept_session(f);
  job->may_start_again = true;
  job->fails = true;
  job->advance(f.clock.to(1));
  CHECK_FALSE(job->finished());
  CHECK(f.sessions.made.size() == 2);
  job->fails = false;
  job->done = true;
  job->advance(f.clock.to(1));
  CHECK(job->result().outcome == Outcome::ok);
}

TEST_CASE("session job: a kept session that went silent after the work asked the worker something is reported lost, not run again") {
  Fixture f;
  auto job = job_on_kept_session(f);
  job->may_start_again = false;
  job->tick(f.clock.to(15));
  REQUIRE(job->finished());
  CHECK(job->result().outcome == Outcome::lost);
  CHECK(f.sessions.made.size() == 1);
}

TEST_CASE("session job: a new session (not a kept one) that goes silent is reported lost, not restarted") {
  Fixture f;
  f.settings.pool = &f.pool;
  auto job = f.working_job();
  job->may_start_again = true;
  job->tick(f.clock.to(15));
  CHECK(job->result().outcome == Outcome::lost);
  CHECK(f.sessions.made.size() == 1);
}

TEST_CASE("session job: the work starts again on a fresh session at most once") {
  Fixture f;
  auto job = job_on_kept_session(f);
  job->may_start_again = true;
  f.sessions.next.heard = f.clock.to(15);
  job->tick(f.clock.to(15));
  REQUIRE(f.sessions.made.size() == 2);
  job->tick(f.clock.to(30));
  REQUIRE(job->finished());
  CHECK(job->result().outcome == Outcome::lost);
  CHECK(f.sessions.made.size() == 2);
}

TEST_CASE("session job: a fresh session after a kept one broke has a connect deadline of its own") {
  Fixture f;
  auto job = job_on_kept_session(f);
  job->may_start_again = true;
  f.sessions.next.on_advance = Phase::handshake;  // the fresh one takes its time
  job->tick(f.clock.to(15));
  REQUIRE(f.sessions.made.size() == 2);
  job->tick(f.clock.to(15.1));
  CHECK_FALSE(job->finished());
  job->tick(f.clock.to(24.9));
  CHECK_FALSE(job->finished());
  job->tick(f.clock.to(25));
  REQUIRE(job->finished());
  CHECK(job->result().outcome == Outcome::timed_out);
  CHECK(job->result().reason == "connect timed out after 10s (during SSH handshake)");
}
