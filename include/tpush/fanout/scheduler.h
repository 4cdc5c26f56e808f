// One event loop (epoll) over every running job, with a cap on how many run at
// once. It also watches the signal fd and the output writer, so Ctrl-C and a
// vanished reader are handled in one place, between events.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tpush/fanout/handshake_pace.h"
#include "tpush/fanout/input_feed.h"
#include "tpush/fanout/job.h"
#include "tpush/fanout/output_sink.h"
#include "tpush/util/pollable.h"

namespace tpush::fanout {

struct RunOutcome {
  std::vector<WorkerResult> results;  // by worker index
  bool interrupted = false;
  bool output_closed = false;
};

// Workers set up their connections a paced number at a time (the rest of the
// fan-out waits, its connect deadline not yet started): see handshake_pace.h.
//
// Besides the jobs, it drives services (util::Pollable) added to it as a
// Reactor: jump-host sessions that carry many workers, the child reaper. They
// are advanced when their fd is ready and ticked with the jobs; they do not
// keep the run going once every job has finished.
class Scheduler final : public util::Reactor {
 public:
  using JobFactory = std::function<std::unique_ptr<Job>(std::size_t index)>;
  using Now = fanout::Now;

  // A second SIGINT within this window closes everything.
  static constexpr std::chrono::seconds second_interrupt_window{2};

  // `signal_fd` (a signalfd, or -1) and `output` (or null) are watched; after
  // each batch of events the output is flushed and `after_events` runs.
  // `input` (or null) is tpush's stdin, read as workers take it. `now` is the
  // clock (tests pass their own).
  //
  // Signals: the first SIGINT stops starting workers and forwards the
  // interrupt to the running ones (Job::forward_interrupt); a second one
  // within the window, or SIGTERM/SIGHUP, stops everything (Job::interrupt).
  Scheduler(std::size_t workers, std::size_t fanout, JobFactory factory, int signal_fd,
            OutputSink* output, std::function<void()> after_events = {}, InputFeed* input = nullptr,
            Now now = Clock::now);
  ~Scheduler() override;
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  RunOutcome run();

  // Told of each job as it starts (result null) and ends (`index` as given to
  // the factory); it may amend the result (--fail-fast names what it stopped).
  using Observer = std::function<void(std::size_t index, WorkerResult* result)>;
  void observe(Observer observer) { observer_ = std::move(observer); }
  // Stops the run (--fail-fast), between events: workers not started yet are
  // reported `not_started` with `why`; the running ones get the first Ctrl-C's
  // treatment, and what still runs after second_interrupt_window is closed.
  // Not an interrupt: the run's outcome is not `interrupted`.
  void stop_all(const std::string& why);

  // Handshakes are paced to stay well inside this (the shortest connect deadline).
  void pace_within(Clock::duration deadline) { pace_.keep_within(deadline); }

  void add(util::Pollable& p) override;
  void remove(util::Pollable& p) override;
  void update(util::Pollable& p) override;

 private:
  struct Watch {  // what epoll watches for a job or a service
    int fd = -1;
    unsigned events = 0;
  };
  struct Slot {
    std::unique_ptr<Job> job;
    Watch watch;
    std::optional<Clock::time_point> connecting_since;  // a handshake under way, for the pace
    Clock::time_point stage_since{};                    // ... and the stage it last passed
    std::size_t stage = 0;
  };
  struct Service {
    util::Pollable* pollable = nullptr;  // null once removed (indexes stay put)
    Watch watch;
  };
  // Makes epoll watch `fd` for `events` under `tag` (nothing: no watch).
  void watch(Watch& w, int fd, unsigned events, std::uint64_t tag);
  void settle_service(std::size_t index);
  void for_each_service(const std::function<void(util::Pollable&)>& call);
  void start_more(Clock::time_point now);
  // Jobs setting up a connection that still hold a place in the pace's window.
  std::size_t count_connecting(Clock::time_point now) const;
  void settle(std::size_t index);  // after any call into a job
  void note_setup(Slot& slot);     // feeds the pace
  // Calls `call` on every running job (a copy of the list: jobs may finish), settling each.
  void for_each_running(const std::function<void(Job&)>& call);
  void stop_starting();  // the workers not started yet are "not started (interrupted)"
  void after_events();
  void handle_stop_request(Clock::time_point now);
  void interrupt_all();
  void on_signal(int signo, Clock::time_point now);
  void first_interrupt(Clock::time_point now);
  void pump_input(Clock::time_point now);
  bool input_wanted() const;
  void advance_all(Clock::time_point now);
  void abort_all();

  std::size_t workers_, fanout_;
  HandshakePace pace_;
  JobFactory factory_;
  int signal_fd_;
  OutputSink* output_;
  std::function<void()> after_events_;
  Now now_;
  Observer observer_;
  std::optional<std::string> stop_request_;  // stop_all(), done between events
  std::optional<Clock::time_point> stopped_at_;
  int epoll_fd_ = -1;
  std::vector<Slot> slots_;
  std::vector<Service> services_;
  std::vector<std::size_t> active_;
  std::size_t next_ = 0;
  bool stopping_ = false;
  InputFeed* input_ = nullptr;
  bool input_registered_ = false;
  std::optional<Clock::time_point> first_interrupt_;
  RunOutcome outcome_;
};

}  // namespace tpush::fanout
