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

// `workers` handshakes, at most pace.window() at once. Each is four steps
// (as SSH's banner, key exchange, auth and session): a step waits a quarter of
// `latency` for its round trip, then needs a quarter of `cpu` from a server.
// `shared`: one server with `cores` serves every handshake, sharing its time
// equally (as the kernel shares it between sshd processes); else each has a
// server of its own. Handshakes differ (as keys, logins and shells do): the
// k-th needs between half and one and a half times `cpu`. Steps of 1 ms.
Run simulate(HandshakePace& pace, std::size_t workers, Clock::duration latency, Clock::duration cpu,
             bool shared, double cores = 2.0) {
  constexpr int kSteps = 4;
  const auto tick = 1ms;
  const double mean_step_cpu = std::chrono::duration<double, std::milli>(cpu).count() / kSteps;
  const auto step_cpu_of = [&](std::size_t k) { return mean_step_cpu * (0.5 + static_cast<double>(k * 7919 % 101) / 100); };
  const auto step_wait = latency / kSteps;
  struct Attempt {
    Clock::time_point start, waiting_until;
    double step_cpu;  // ms
    int steps_left = kSteps;
    double cpu_left = 0;  // of the current step, in ms
  };
  Clock::time_point now{};
  std::vector<Attempt> running;
  std::size_t started = 0, done = 0;
  Run r;
  while (done < workers) {
    while (started < workers && running.size() < pace.window()) {
      const double step_cpu = step_cpu_of(started);
      running.push_back({now, now + step_wait, step_cpu, kSteps, step_cpu});
      ++started;
    }
    r.most_at_once = std::max(r.most_at_once, running.size());
    now += tick;
    std::size_t computing = 0;
    for (const auto& a : running) computing += now >= a.waiting_until ? 1 : 0;
    const double share = shared ? std::min(1.0, cores / static_cast<double>(std::max<std::size_t>(1, computing))) : 1.0;
    for (auto it = running.begin(); it != running.end();) {
      if (now >= it->waiting_until && (it->cpu_left -= share) <= 0 && --it->steps_left > 0) {
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
  // A real pod: every worker's handshake takes 175-225 ms whatever the others do.
  HandshakePace pace(1024);
  pace.keep_within(10s);
  const Run r = simulate(pace, 1024, 150ms, 50ms, false);
  // Slow start doubles the bound each round of 200 ms: 16 .. 1024 in 7 rounds.
  CHECK(secs(r.wall) <= 8 * 0.2 + 0.05);
  CHECK(r.most_at_once >= 512);
  CHECK(r.slowest <= 226ms);
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
