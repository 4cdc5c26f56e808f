// fanout::HandshakePace against two simulated kinds of far side, on a clock
// of the test's own: one server whose CPU all handshakes share (the loopback
// farm, a bastion, a loaded pod), and workers with a server each (a real pod).
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "tpush/fanout/handshake_pace.h"

namespace {

using namespace std::chrono_literals;
using tpush::fanout::Clock;
using tpush::fanout::HandshakePace;

struct Run {
  Clock::duration wall{};
  Clock::duration slowest{};
  std::size_t most_at_once = 0;
};

// `workers` handshakes, at most pace.window() at once. Each is TCP's connect
// (a quarter of `latency`, answered by the kernel), then four steps (as SSH's
// banner, key exchange, auth and session): a step waits a quarter of
// `latency` for its round trip, then needs a quarter of `cpu` from a server.
// The connect and every step but the last are stages passed, the last step
// completes the handshake. `shared`: one server with `cores` serves every
// handshake, sharing its time equally (as the kernel shares it between sshd
// processes); else each has a server of its own. Handshakes differ (as keys,
// logins and shells do): the k-th needs between half and one and a half times
// `cpu`. Steps of 1 ms.
Run simulate(HandshakePace& pace, std::size_t workers, Clock::duration latency, Clock::duration cpu,
             bool shared, double cores = 2.0) {
  constexpr int kSteps = 4;
  const auto tick = 1ms;
  const double mean_step_cpu = std::chrono::duration<double, std::milli>(cpu).count() / kSteps;
  const auto step_cpu_of = [&](std::size_t k) { return mean_step_cpu * (0.5 + static_cast<double>(k * 7919 % 101) / 100); };
  const auto step_wait = latency / kSteps;
  struct Attempt {
    Clock::time_point start, waiting_until, step_start;
    double step_cpu;  // ms
    int steps_left = kSteps + 1;  // the connect first, without CPU
    double cpu_left = 0;          // of the current step, in ms
  };
  Clock::time_point now{};
  std::vector<Attempt> running;
  std::size_t started = 0, done = 0;
  Run r;
  while (done < workers) {
    while (started < workers && running.size() < pace.window()) {
      running.push_back({now, now + step_wait, now, step_cpu_of(started)});
      ++started;
    }
    r.most_at_once = std::max(r.most_at_once, running.size());
    now += tick;
    std::size_t computing = 0;
    for (const auto& a : running) computing += now >= a.waiting_until && a.cpu_left > 0 ? 1 : 0;
    const double share = shared ? std::min(1.0, cores / static_cast<double>(std::max<std::size_t>(1, computing))) : 1.0;
    for (auto it = running.begin(); it != running.end();) {
      if (now >= it->waiting_until && (it->cpu_left -= share) <= 0 && --it->steps_left > 0) {
        pace.progressed(static_cast<std::size_t>(kSteps + 1 - it->steps_left), now - it->step_start);
        it->step_start = now;
        it->waiting_until = now + step_wait;
        it->cpu_left = it->step_cpu;
      }
      if (it->steps_left == 0) {
        const auto took = now - it->start;
        r.slowest = std::max(r.slowest, took);
        pace.completed(took, now);
        it = running.erase(it);
        ++done;
      } else {
        ++it;
      }
    }
  }
  r.wall = now - Clock::time_point{};
  return r;
}

double secs(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

TEST_CASE("handshake pace: one shared server stays busy while no handshake nears the deadline") {
  // 1,024 workers on one 2-core sshd, 50 ms of its CPU each: the floor is 25.6 s.
  for (const auto deadline : {std::chrono::seconds(1), std::chrono::seconds(10)}) {
    CAPTURE(deadline.count());
    HandshakePace pace(1024);
    pace.keep_within(deadline);
    const Run r = simulate(pace, 1024, 1ms, 50ms, true);
    const double floor = 1024 * 0.050 / 2;
    CHECK(secs(r.wall) <= floor * 1.1);
    // Not near the deadline: none is reported for the load tpush made.
    CHECK(r.slowest < std::chrono::milliseconds(deadline) * 6 / 10);
    // Without the pace (everything at once) each handshake would take the whole run.
    CHECK(r.most_at_once <= 64);
  }
}

TEST_CASE("handshake pace: far from the servers, the shared one still stays busy") {
  // 50 ms round trips, four of them per handshake, before the server's CPU.
  HandshakePace pace(256);
  pace.keep_within(10s);
  const Run r = simulate(pace, 256, 200ms, 50ms, true);
  const double floor = 256 * 0.050 / 2;
  CHECK(secs(r.wall) <= floor * 1.1 + 0.2);
  CHECK(r.slowest < 10s / 4);
}

TEST_CASE("handshake pace: workers with servers of their own are not held back") {
  // A real pod: every worker's handshake takes 214-262 ms whatever the others do.
  HandshakePace pace(1024);
  pace.keep_within(10s);
  const Run r = simulate(pace, 1024, 150ms, 50ms, false);
  // Slow start grows the bound with every stage a handshake passes: 16 ..
  // 1024 while the first handshakes are still under way, where doubling once
  // a handshake would take seven of them.
  CHECK(r.wall <= 3 * r.slowest);
  CHECK(r.most_at_once >= 768);
  CHECK(r.slowest <= 262ms);
}

TEST_CASE("handshake pace: a pod whose round trips alone take a quarter of the deadline is not held to the first bound") {
  // 300 ms away: eight round trips make every handshake 2.4-2.5 s, a quarter
  // of the 10 s deadline, however few are under way.
  HandshakePace pace(256);
  pace.keep_within(10s);
  const Run r = simulate(pace, 256, 2000ms, 50ms, false);
  CHECK(r.slowest <= 2600ms);
  CHECK(r.most_at_once >= 192);
  // Sixteen at a time, it would take sixteen handshakes' time.
  CHECK(r.wall <= 4 * r.slowest);
}

TEST_CASE("handshake pace: far from one server with CPU to spare, the bound grows by stages") {
  // 64 workers 100 ms away, 18 ms of the server's 2 cores each (a fast sshd):
  // a handshake is over half a second of round trips, and the CPU floor 0.58 s.
  HandshakePace pace(64);
  pace.keep_within(10s);
  const Run r = simulate(pace, 64, 400ms, 18ms, true);
  // 1.6 s when the bound doubled once per handshake.
  CHECK(secs(r.wall) <= 1.2);
  CHECK(r.most_at_once >= 56);
}

TEST_CASE("handshake pace: a stage grows the bound only when it is round trips, and while they stay fast") {
  // Loopback: TCP's answer in 50 us, the key exchange 5 ms of sshd's CPU.
  HandshakePace near(64);
  near.progressed(1, 50us);
  for (int i = 0; i < 4; ++i) near.progressed(2, 5ms);
  CHECK(near.window() == HandshakePace::initial_window);

  // 50 ms away: the key exchange is two round trips and a little CPU.
  HandshakePace far(1024);
  far.progressed(1, 50ms);
  far.progressed(2, 104ms);
  far.progressed(2, 110ms);
  CHECK(far.window() == HandshakePace::initial_window + 2);
  // Then the server queues: most of a run of stages slower than 1.25 times
  // the fastest, and stages grow the bound no more.
  for (std::size_t i = 2; i < HandshakePace::stage_run; ++i) far.progressed(2, 300ms);
  far.progressed(2, 104ms);
  CHECK(far.window() == HandshakePace::initial_window + 2);
  // Whole handshakes still do.
  far.completed(400ms, Clock::time_point{} + 1s);
  CHECK(far.window() == HandshakePace::initial_window + 3);
}

TEST_CASE("handshake pace: the window never leaves [floor, fan-out]") {
  HandshakePace small(3);
  CHECK(small.window() == 3);
  for (int i = 0; i < 100; ++i) small.completed(10ms, Clock::time_point{} + i * 10ms);
  CHECK(small.window() == 3);

  HandshakePace pace(1024);
  Clock::time_point now{};
  pace.completed(10ms, now);  // the fastest: 10 ms
  for (int i = 0; i < 1000; ++i) pace.completed(5s, now += 5s);  // everything else very slow
  CHECK(pace.window() == HandshakePace::floor_window);
}

TEST_CASE("handshake pace: an attempt is presumed lost after 2 s, or 4 times the fastest handshake") {
  HandshakePace pace(64);
  CHECK(pace.presumed_lost_after() == 2s);
  pace.completed(100ms, Clock::time_point{} + 100ms);
  CHECK(pace.presumed_lost_after() == 2s);
  HandshakePace far(64);
  far.completed(1500ms, Clock::time_point{} + 1500ms);
  CHECK(far.presumed_lost_after() == 6s);
}

TEST_CASE("handshake pace: the summary says what happened, once there is something to say") {
  HandshakePace pace(64);
  CHECK(pace.summary().empty());
  pace.completed(100ms, Clock::time_point{} + 100ms);
  const std::string s = pace.summary();
  CHECK(s.find("1 handshakes") != std::string::npos);
  CHECK(s.find("the fastest 0.100 s") != std::string::npos);
}
