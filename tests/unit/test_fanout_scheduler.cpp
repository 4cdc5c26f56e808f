// fanout::Scheduler driven by fake jobs: no network, real epoll, real fds
// (eventfds and a signalfd) for readiness and Ctrl-C.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tpush/fanout/job.h"
#include "tpush/fanout/scheduler.h"
#include "tpush/output/line_output.h"
#include "tpush/output/writer.h"

namespace {

using tpush::fanout::Clock;
using tpush::fanout::Job;
using tpush::fanout::Outcome;
using tpush::fanout::RunOutcome;
using tpush::fanout::Scheduler;
using tpush::fanout::WorkerResult;
using tpush::util::Wait;

// What the fake jobs saw, shared across all of them.
struct Probe {
  explicit Probe(std::size_t n) : advances(n), ticks(n), interrupts(n), forwards(n), created(n) {}
  int running = 0;
  int max_running = 0;
  std::vector<int> advances, ticks, interrupts, forwards, created;
};

struct Behaviour {
  int finish_after_advances = 0;  // 0: advancing never finishes it
  int finish_after_ticks = 0;     // 0: ticking never finishes it
  bool own_fd = false;            // wait on an eventfd (created by the job)
  bool fd_ready = false;          // ... that is readable from the start
  bool finish_on_interrupt = true;  // else: finish on the next tick after interrupt()
  bool connecting = false;          // setting up its connection until it finishes
  bool finish_on_forward = false;   // its command ends as the first interrupt reaches it
  bool silent = false;              // ... hearing nothing from its server all along
  std::vector<int> stage_ticks;     // ... passing stage k+1 of its setup at its stage_ticks[k]-th tick
  std::function<void(std::size_t index, int advance)> on_advance;
  std::function<void(std::size_t index, int tick)> on_tick;
};

// A guard against hanging the test run: no fake job lives past this many ticks.
constexpr int kWatchdogTicks = 40;

class FakeJob : public Job {
 public:
  FakeJob(std::size_t index, Probe& probe, Behaviour b) : index_(index), probe_(probe), b_(std::move(b)) {
    ++probe_.created[index_];
    probe_.max_running = std::max(probe_.max_running, ++probe_.running);
    if (b_.own_fd) {
      fd_ = eventfd(b_.fd_ready ? 1 : 0, EFD_NONBLOCK | EFD_CLOEXEC);
      REQUIRE(fd_ >= 0);
    }
  }
  ~FakeJob() override {
    if (fd_ >= 0) close(fd_);
  }

  void advance(Clock::time_point now) override {
    REQUIRE_FALSE(done_);
    if (!begun_) begun_ = now;
    const int n = ++probe_.advances[index_];
    if (b_.on_advance) b_.on_advance(index_, n);
    if (b_.own_fd && !b_.fd_ready) {  // consume a wake-up
      std::uint64_t v;
      [[maybe_unused]] auto r = read(fd_, &v, sizeof v);
    }
    if (b_.finish_after_advances && n >= b_.finish_after_advances) finish(Outcome::ok, "job");
  }
  void tick(Clock::time_point) override {
    REQUIRE_FALSE(done_);
    const int n = ++probe_.ticks[index_];
    if (b_.on_tick) b_.on_tick(index_, n);
    if (done_) return;
    if (interrupted_) finish(Outcome::interrupted, "interrupted");
    else if (b_.finish_after_ticks && n >= b_.finish_after_ticks) finish(Outcome::ok, "job");
    else if (n >= kWatchdogTicks) finish(Outcome::failed, "watchdog");
  }
  void interrupt() override {
    ++probe_.interrupts[index_];
    if (done_) return;
    interrupted_ = true;
    if (b_.finish_on_interrupt) finish(Outcome::interrupted, "interrupted");
  }
  void forward_interrupt() override {
    ++probe_.forwards[index_];
    if (b_.finish_on_forward && !done_) finish(Outcome::failed, "signal INT");
  }
  bool finished() const override { return done_; }
  int fd() const override { return fd_; }
  Wait wait() const override { return fd_ >= 0 ? Wait::read : Wait::none; }
  bool paused_for_output() const override { return false; }
  bool connecting() const override { return b_.connecting && !done_; }
  Clock::time_point setup_progress(Clock::time_point now) const override {
    return b_.silent ? begun_.value_or(now) : now;
  }
  std::size_t setup_stage() const override {
    const int ticks = probe_.ticks[index_];
    return static_cast<std::size_t>(std::count_if(b_.stage_ticks.begin(), b_.stage_ticks.end(),
                                                  [ticks](int t) { return t <= ticks; }));
  }
  WorkerResult result() const override { return result_; }

  int event_fd() const { return fd_; }

 private:
  void finish(Outcome o, const std::string& why) {
    done_ = true;
    --probe_.running;
    result_.outcome = o;
    result_.exit_status = o == Outcome::ok ? 0 : -1;
    result_.reason = why + " " + std::to_string(index_);
  }

  std::size_t index_;
  Probe& probe_;
  Behaviour b_;
  int fd_ = -1;
  bool done_ = false;
  bool interrupted_ = false;
  std::optional<Clock::time_point> begun_;
  WorkerResult result_;
};

Scheduler::JobFactory factory_for(Probe& probe, std::function<Behaviour(std::size_t)> behaviour) {
  return [&probe, behaviour](std::size_t i) -> std::unique_ptr<Job> {
    return std::make_unique<FakeJob>(i, probe, behaviour(i));
  };
}

void check_all_ok(const RunOutcome& run) {
  for (std::size_t i = 0; i < run.results.size(); ++i) {
    CAPTURE(i);
    CHECK(run.results[i].outcome == Outcome::ok);
    CHECK(run.results[i].reason == "job " + std::to_string(i));
  }
}

// Blocks a signal in this thread and opens a signalfd for it; undoes both.
class SignalFd {
 public:
  explicit SignalFd(int signo) {
    sigemptyset(&set_);
    sigaddset(&set_, signo);
    REQUIRE(pthread_sigmask(SIG_BLOCK, &set_, &old_) == 0);
    fd_ = signalfd(-1, &set_, SFD_NONBLOCK | SFD_CLOEXEC);
    REQUIRE(fd_ >= 0);
  }
  ~SignalFd() {
    signalfd_siginfo info;
    while (read(fd_, &info, sizeof info) == sizeof info) {
    }
    close(fd_);
    pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  int fd() const { return fd_; }

 private:
  sigset_t set_, old_;
  int fd_ = -1;
};

}  // namespace

TEST_CASE("scheduler: results land at their worker's index") {
  constexpr std::size_t n = 9;
  Probe probe(n);
  // Mixed jobs: done on the first advance, after a few advances on a ready
  // fd, in reverse order of start.
  auto behaviour = [](std::size_t i) {
    Behaviour b;
    b.own_fd = i % 3 != 0;
    b.fd_ready = true;
    b.finish_after_advances = i % 3 == 0 ? 1 : static_cast<int>(n - i) + 1;
    return b;
  };
  int after_events = 0;
  Scheduler s(n, n, factory_for(probe, behaviour), -1, nullptr, [&] { ++after_events; });
  const RunOutcome run = s.run();
  REQUIRE(run.results.size() == n);
  check_all_ok(run);
  CHECK_FALSE(run.interrupted);
  CHECK_FALSE(run.output_closed);
  CHECK(after_events >= 1);
  CHECK(probe.running == 0);
  for (std::size_t i = 0; i < n; ++i) CHECK(probe.created[i] == 1);
}

TEST_CASE("scheduler: the fanout cap is never exceeded and every job runs") {
  for (std::size_t fanout : {1u, 3u, 7u, 50u}) {
    constexpr std::size_t n = 20;
    CAPTURE(fanout);
    Probe probe(n);
    auto behaviour = [](std::size_t i) {
      Behaviour b;
      b.own_fd = i % 4 != 0;
      b.fd_ready = true;
      // Without a fd only the start advances a job: those finish at once.
      b.finish_after_advances = b.own_fd ? 1 + static_cast<int>(i % 5) : 1;
      return b;
    };
    Scheduler s(n, fanout, factory_for(probe, behaviour), -1, nullptr, {});
    const RunOutcome run = s.run();
    check_all_ok(run);
    CHECK(probe.max_running <= static_cast<int>(fanout));
    // The cap is also used: as many as allowed run at once (jobs with a fd
    // take more than one turn).
    CHECK(probe.max_running >= std::min<int>(2, static_cast<int>(fanout)));
    for (std::size_t i = 0; i < n; ++i) CHECK(probe.created[i] == 1);
    CHECK(probe.running == 0);
  }
}

TEST_CASE("scheduler: fanout 0 is treated as 1") {
  constexpr std::size_t n = 4;
  Probe probe(n);
  auto behaviour = [](std::size_t) {
    Behaviour b;
    b.own_fd = true;
    b.fd_ready = true;
    b.finish_after_advances = 3;
    return b;
  };
  Scheduler s(n, 0, factory_for(probe, behaviour), -1, nullptr, {});
  check_all_ok(s.run());
  CHECK(probe.max_running == 1);
}

TEST_CASE("scheduler: a job waiting on a fd is advanced when it becomes readable") {
  constexpr std::size_t n = 2;
  Probe probe(n);
  std::vector<FakeJob*> jobs(n, nullptr);
  auto behaviour = [&](std::size_t i) {
    Behaviour b;
    if (i == 0) {
      // Job 0 waits on its fd, never ready by itself; advancing it twice
      // (start + one wake-up) finishes it.
      b.own_fd = true;
      b.finish_after_advances = 2;
    } else {
      // Job 1 wakes job 0 from its first tick, then finishes on its next one.
      b.finish_after_ticks = 2;
      b.on_tick = [&](std::size_t, int tick) {
        if (tick == 1) {
          REQUIRE(jobs[0] != nullptr);
          const std::uint64_t one = 1;
          REQUIRE(write(jobs[0]->event_fd(), &one, sizeof one) == sizeof one);
        }
      };
    }
    return b;
  };
  Scheduler::JobFactory factory = [&](std::size_t i) -> std::unique_ptr<Job> {
    auto job = std::make_unique<FakeJob>(i, probe, behaviour(i));
    jobs[i] = job.get();
    return job;
  };
  Scheduler s(n, n, factory, -1, nullptr, {});
  const RunOutcome run = s.run();
  check_all_ok(run);
  CHECK(probe.advances[0] == 2);
  // Job 0 finished through its fd, not through the watchdog.
  CHECK(probe.ticks[0] < kWatchdogTicks);
}

TEST_CASE("scheduler: jobs that wait on nothing are ticked") {
  constexpr std::size_t n = 3;
  Probe probe(n);
  auto behaviour = [](std::size_t i) {
    Behaviour b;
    b.finish_after_ticks = 1;
    b.own_fd = i == 2;  // a fd that never becomes ready: ticks still come
    return b;
  };
  const auto start = std::chrono::steady_clock::now();
  Scheduler s(n, n, factory_for(probe, behaviour), -1, nullptr, {});
  const RunOutcome run = s.run();
  const auto elapsed = std::chrono::steady_clock::now() - start;
  check_all_ok(run);
  for (std::size_t i = 0; i < n; ++i) {
    CHECK(probe.ticks[i] == 1);
    CHECK(probe.advances[i] == 1);  // started, then nothing woke it
  }
  CHECK(elapsed < std::chrono::milliseconds(1500));
}

TEST_CASE("scheduler: a signal on the signal fd interrupts the run") {
  constexpr std::size_t n = 6;
  SignalFd sig(SIGUSR1);
  Probe probe(n);
  // Job 0 is done at once; jobs 1 and 2 run (fanout 2) until job 1's first
  // tick raises SIGUSR1. Job 2 takes one more tick to wind down.
  auto behaviour = [](std::size_t i) {
    Behaviour b;
    if (i == 0) b.finish_after_advances = 1;
    if (i == 1) b.on_tick = [](std::size_t, int tick) {
      if (tick == 1) raise(SIGUSR1);
    };
    if (i == 2) b.finish_on_interrupt = false;
    return b;
  };
  Scheduler s(n, 2, factory_for(probe, behaviour), sig.fd(), nullptr, {});
  const RunOutcome run = s.run();
  CHECK(run.interrupted);
  CHECK_FALSE(run.output_closed);
  CHECK(run.results[0].outcome == Outcome::ok);
  CHECK(run.results[1].outcome == Outcome::interrupted);
  CHECK(run.results[2].outcome == Outcome::interrupted);
  CHECK(probe.interrupts[0] == 0);
  CHECK(probe.interrupts[1] == 1);
  CHECK(probe.interrupts[2] == 1);
  for (std::size_t i = 3; i < n; ++i) {
    CAPTURE(i);
    CHECK(probe.created[i] == 0);
    CHECK(run.results[i].outcome == Outcome::not_started);
    CHECK(run.results[i].reason == "not started (interrupted)");
  }
  CHECK(probe.running == 0);
  CHECK(probe.max_running <= 2);
}

TEST_CASE("scheduler: a second Ctrl-C closes everything only within the window") {
  using namespace std::chrono_literals;
  for (const bool within : {true, false}) {
    CAPTURE(within);
    SignalFd sig(SIGINT);
    Probe probe(2);
    // The scheduler's clock: real time plus what the test skips ahead.
    Clock::duration skipped{0};
    auto now = [&skipped] { return Clock::now() + skipped; };
    auto behaviour = [&](std::size_t i) {
      Behaviour b;
      b.finish_after_ticks = 8;
      if (i == 0) b.on_tick = [&](std::size_t, int tick) {
        if (tick == 1) raise(SIGINT);
        if (tick == 3) {
          if (!within) skipped += Scheduler::second_interrupt_window + 1s;
          raise(SIGINT);
        }
      };
      return b;
    };
    Scheduler s(2, 2, factory_for(probe, behaviour), sig.fd(), nullptr, {}, nullptr, now);
    const RunOutcome run = s.run();
    CHECK(run.interrupted);
    for (std::size_t i = 0; i < 2; ++i) {
      CAPTURE(i);
      if (within) {  // the first was passed on, the second closed the job
        CHECK(probe.forwards[i] == 1);
        CHECK(probe.interrupts[i] == 1);
        CHECK(run.results[i].outcome == Outcome::interrupted);
      } else {  // too late to count as the second: passed on again, the jobs end on their own
        CHECK(probe.forwards[i] == 2);
        CHECK(probe.interrupts[i] == 0);
        CHECK(run.results[i].outcome == Outcome::ok);
      }
    }
  }
}

TEST_CASE("scheduler: the first Ctrl-C's notice counts every running worker it reached") {
  // Three commands run, one worker still connects; Ctrl-C ends the commands of workers
  // 0 and 2 in the same wake-up that passes it on. The notice names the three it was
  // sent to: not the one connecting, and not fewer for the two that ended at once.
  SignalFd sig(SIGINT);
  int p[2];
  REQUIRE(pipe2(p, O_CLOEXEC) == 0);
  constexpr std::size_t n = 4;
  std::string notices;
  {
    tpush::output::Writer writer(p[1], p[1]);
    tpush::output::LineOutput sink(writer, std::vector<std::string>(n, "w"), {});
    Probe probe(n);
    auto behaviour = [](std::size_t i) {
      Behaviour b;
      b.finish_after_ticks = 6;
      if (i == 0 || i == 2) b.finish_on_forward = true;
      if (i == 1) b.on_tick = [](std::size_t, int tick) {
        if (tick == 1) raise(SIGINT);
      };
      if (i == 3) b.connecting = true;
      return b;
    };
    Scheduler s(n, n, factory_for(probe, behaviour), sig.fd(), &sink, {});
    const RunOutcome run = s.run();
    writer.drain_and_stop();
    CHECK(run.interrupted);
    CHECK(run.results[0].reason == "signal INT 0");
    for (std::size_t i = 0; i < n; ++i) CHECK(probe.forwards[i] == 1);
  }
  close(p[1]);
  char buf[4096];
  for (ssize_t got; (got = read(p[0], buf, sizeof buf)) > 0;) notices.append(buf, static_cast<std::size_t>(got));
  close(p[0]);
  CHECK(notices.find("tpush: interrupt sent to 3 running worker(s)") != std::string::npos);
}

TEST_CASE("scheduler: any readable signal fd interrupts (eventfd stand-in)") {
  constexpr std::size_t n = 4;
  const int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  REQUIRE(efd >= 0);
  Probe probe(n);
  auto behaviour = [efd](std::size_t i) {
    Behaviour b;
    b.own_fd = true;  // never ready
    if (i == 0) b.on_advance = [efd](std::size_t, int) {
      const std::uint64_t one = 1;
      REQUIRE(write(efd, &one, sizeof one) == sizeof one);
    };
    return b;
  };
  Scheduler s(n, 3, factory_for(probe, behaviour), efd, nullptr, {});
  const RunOutcome run = s.run();
  close(efd);
  CHECK(run.interrupted);
  for (std::size_t i = 0; i < 3; ++i) CHECK(run.results[i].outcome == Outcome::interrupted);
  CHECK(run.results[3].outcome == Outcome::not_started);
  CHECK(probe.created[3] == 0);
  for (std::size_t i = 0; i < 3; ++i) CHECK(probe.ticks[i] < kWatchdogTicks);
}

TEST_CASE("scheduler: a vanished output reader stops the run") {
  std::signal(SIGPIPE, SIG_IGN);
  int p[2];
  REQUIRE(pipe2(p, O_CLOEXEC) == 0);
  close(p[0]);
  tpush::output::Writer writer(p[1], p[1]);
  constexpr std::size_t n = 5;
  tpush::output::LineOutput sink(writer, std::vector<std::string>(n, "w"), {});
  Probe probe(n);
  auto behaviour = [&writer](std::size_t i) {
    Behaviour b;
    b.own_fd = true;  // never ready: only the writer can end the run early
    if (i == 0) b.on_advance = [&writer](std::size_t, int) { writer.write(1, "line\n"); };
    return b;
  };
  Scheduler s(n, 2, factory_for(probe, behaviour), -1, &sink, {});
  const RunOutcome run = s.run();
  writer.drain_and_stop();
  close(p[1]);
  CHECK(run.output_closed);
  CHECK(run.interrupted);
  CHECK(run.results[0].outcome == Outcome::interrupted);
  CHECK(run.results[1].outcome == Outcome::interrupted);
  for (std::size_t i = 2; i < n; ++i) CHECK(run.results[i].outcome == Outcome::not_started);
  CHECK(probe.ticks[0] < kWatchdogTicks);
}

TEST_CASE("scheduler: no workers is an immediate, empty run") {
  Probe probe(0);
  Scheduler s(0, 4, factory_for(probe, [](std::size_t) { return Behaviour{}; }), -1, nullptr, {});
  const RunOutcome run = s.run();
  CHECK(run.results.empty());
  CHECK_FALSE(run.interrupted);
}

TEST_CASE("scheduler: stop_all (--fail-fast) passes the interrupt on, then closes what still runs") {
  using namespace std::chrono_literals;
  // Worker 0 fails at its first tick; 1 and 2 run on; 3 waits behind the fan-out of 3.
  Probe probe(4);
  Clock::duration skipped{0};
  auto now = [&skipped] { return Clock::now() + skipped; };
  std::vector<std::string> seen;
  Scheduler* sched = nullptr;
  auto behaviour = [&](std::size_t i) {
    Behaviour b;
    b.finish_on_interrupt = true;
    if (i == 0) b.finish_after_ticks = 1;
    if (i == 1) b.on_tick = [&](std::size_t, int tick) {
      if (tick == 3) skipped += Scheduler::second_interrupt_window + 1s;  // time passes: close the rest
    };
    return b;
  };
  Scheduler s(4, 3, factory_for(probe, behaviour), -1, nullptr, {}, nullptr, now);
  sched = &s;
  s.observe([&](std::size_t i, WorkerResult* r) {
    seen.push_back((r ? "end " : "start ") + std::to_string(i));
    if (r && i == 0) {
      r->outcome = Outcome::failed;  // the observer may amend what it is told
      sched->stop_all("not started (--fail-fast)");
    }
  });
  const RunOutcome run = s.run();
  CHECK_FALSE(run.interrupted);  // a stop is not an interrupt: the failure decides the exit code
  CHECK(run.results[0].outcome == Outcome::failed);
  for (std::size_t i : {1u, 2u}) {
    CAPTURE(i);
    CHECK(probe.forwards[i] == 1);   // first the interrupt, passed on
    CHECK(probe.interrupts[i] == 1); // then, after the window, closed
    CHECK(run.results[i].outcome == Outcome::interrupted);
  }
  CHECK(probe.created[3] == 0);
  CHECK(run.results[3].outcome == Outcome::not_started);
  CHECK(run.results[3].reason == "not started (--fail-fast)");
  CHECK(seen.front() == "start 0");
  CHECK(std::count(seen.begin(), seen.end(), "end 0") == 1);
  CHECK(std::find(seen.begin(), seen.end(), "start 3") == seen.end());
}

TEST_CASE("scheduler: attempts that hear nothing stop holding places among the handshakes") {
  using namespace std::chrono_literals;
  // 20 blackholed workers first, then 20 that are quick: more silent attempts
  // than the pace lets start at once. Each tick is a second on the clock.
  constexpr std::size_t n = 40, silent = 20;
  Probe probe(n);
  Clock::duration skipped{0};
  auto now = [&skipped] { return Clock::now() + skipped; };
  int silent_done_when_quick_started = -1;
  int silent_done = 0;
  auto behaviour = [&](std::size_t i) {
    Behaviour b;
    if (i < silent) {
      b.connecting = b.silent = true;
      b.finish_after_ticks = 30;  // their own deadline
      b.on_tick = [&, i](std::size_t, int tick) {
        if (i == 0) skipped += 1s;
        if (tick == 30) ++silent_done;
      };
    } else {
      b.finish_after_advances = 1;
    }
    return b;
  };
  Scheduler::JobFactory factory = [&](std::size_t i) -> std::unique_ptr<Job> {
    if (i == n - 1) silent_done_when_quick_started = silent_done;
    return std::make_unique<FakeJob>(i, probe, behaviour(i));
  };
  Scheduler s(n, n, factory, -1, nullptr, {}, nullptr, now);
  const RunOutcome run = s.run();
  check_all_ok(run);
  // The last quick worker started while every blackholed one still waited for its deadline.
  CHECK(silent_done_when_quick_started == 0);
  // ... but not before the first ones had been silent for the pace's limit:
  // at first they held every place.
  CHECK(probe.max_running >= static_cast<int>(tpush::fanout::HandshakePace::initial_window));
}

TEST_CASE("scheduler: handshakes that pass their stages in about as many round trips start more before any completes") {
  using namespace std::chrono_literals;
  // Workers far away: each tick is a second on the clock (a round trip, say).
  // TCP answers at the first tick, keys are exchanged two ticks later, and the
  // handshake takes six; worker 0, whose ticks move the clock, stays longer.
  constexpr std::size_t n = 48;
  Probe probe(n);
  Clock::duration skipped{0};
  auto now = [&skipped] { return Clock::now() + skipped; };
  int created_when_one_done = -1;
  auto behaviour = [&](std::size_t i) {
    Behaviour b;
    b.connecting = true;
    b.stage_ticks = {1, 3};
    b.finish_after_ticks = i == 0 ? 12 : 6;
    b.on_tick = [&, i](std::size_t, int tick) {
      if (i == 0) skipped += 1s;
      if (tick == 6 && created_when_one_done < 0)
        created_when_one_done = static_cast<int>(std::count(probe.created.begin(), probe.created.end(), 1));
    };
    return b;
  };
  Scheduler s(n, n, factory_for(probe, behaviour), -1, nullptr, {}, nullptr, now);
  check_all_ok(s.run());
  // The first ones' key exchanges each let one more start: twice the initial
  // bound were under way before any handshake completed.
  CHECK(created_when_one_done >= 2 * static_cast<int>(tpush::fanout::HandshakePace::initial_window));
}
