// One event loop (epoll) over every running job, with a cap on how many run at
// once. It also watches the signal fd and the output writer, so Ctrl-C and a
// vanished reader are handled in one place, between events.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "tpush/fanout/job.h"

namespace tpush::output {
class Writer;
}

namespace tpush::fanout {

struct RunOutcome {
  std::vector<WorkerResult> results;  // by worker index
  bool interrupted = false;
  bool output_closed = false;
};

class Scheduler {
 public:
  using JobFactory = std::function<std::unique_ptr<Job>(std::size_t index)>;

  // `signal_fd` (a signalfd, or -1) and `writer` (or null) are watched;
  // `after_events` runs after each batch of events (the output flush).
  Scheduler(std::size_t workers, std::size_t fanout, JobFactory factory, int signal_fd,
            output::Writer* writer, std::function<void()> after_events);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  RunOutcome run();

 private:
  struct Slot {
    std::unique_ptr<Job> job;
    int registered_fd = -1;
    unsigned registered_events = 0;
  };
  void start_more(Clock::time_point now);
  void settle(std::size_t index);  // after any call into a job
  void interrupt_all();
  void abort_all();

  std::size_t workers_, fanout_;
  JobFactory factory_;
  int signal_fd_;
  output::Writer* writer_;
  std::function<void()> after_events_;
  int epoll_fd_ = -1;
  std::vector<Slot> slots_;
  std::vector<std::size_t> active_;
  std::size_t next_ = 0;
  bool stopping_ = false;
  RunOutcome outcome_;
};

}  // namespace tpush::fanout
