// What every per-worker job shares, written once: when it started, how it
// ended (its result, recorded once), the -u deadline and what an interrupt
// does. SessionJob (commands, transfers) and RsyncJob build on it.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <utility>

#include "tpush/fanout/deadlines.h"
#include "tpush/fanout/job.h"

namespace tpush::fanout {

class WorkerJob : public Job {
 public:
  // Second Ctrl-C: ends the job now, "interrupted" (or "not started").
  void interrupt() override;
  bool finished() const final { return finished_; }
  WorkerResult result() const final { return result_; }

 protected:
  // `now`: the run's clock, read wherever the job needs the time between the
  // scheduler's calls (which hand it the time).
  WorkerJob(std::size_t index, Deadlines deadlines, Now now = Clock::now)
      : index_(index), deadlines_(deadlines), now_(std::move(now)) {}

  Clock::time_point now() const { return now_(); }

  // The first advance(): the job's clock starts.
  void begin(Clock::time_point now);
  bool started() const { return started_; }
  Clock::time_point start_time() const { return start_; }

  // Ends the job with this result (only the first call counts); release()
  // frees what the job holds first. `signal`: what killed the remote command.
  void finish(Outcome outcome, std::string reason, int exit_status = -1, std::string signal = {});
  // True once the -u deadline, counted from `since`, has passed.
  bool command_deadline_passed(Clock::time_point now, Clock::time_point since) const;
  // "timed out after 30s"
  std::string timed_out_reason() const;

  // Frees the connection, channel or child process; never waits on the network.
  virtual void release() = 0;
  // True once the worker was reached (a TCP connection was made), for the TPU retry.
  virtual bool reached() const = 0;

  const std::size_t index_;
  const Deadlines deadlines_;

 private:
  Now now_;
  bool started_ = false;
  bool finished_ = false;
  Clock::time_point start_{};
  WorkerResult result_;
};

}  // namespace tpush::fanout
