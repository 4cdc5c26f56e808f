#include "tpush/fanout/worker_job.h"

namespace tpush::fanout {

void WorkerJob::begin(Clock::time_point now) {
  if (started_) return;
  started_ = true;
  start_ = now;
}

void WorkerJob::interrupt() {
  finish(Outcome::interrupted, started_ ? "interrupted" : "not started (interrupted)");
}

void WorkerJob::finish(Outcome outcome, std::string reason, int exit_status) {
  if (finished_) return;
  finished_ = true;
  release();
  result_.outcome = outcome;
  result_.reason = std::move(reason);
  result_.exit_status = exit_status;
  result_.reached = reached();
  result_.seconds = started_ ? std::chrono::duration<double>(Clock::now() - start_).count() : 0;
}

bool WorkerJob::command_deadline_passed(Clock::time_point now, Clock::time_point since) const {
  return deadlines_.command && now - since >= *deadlines_.command;
}

std::string WorkerJob::timed_out_reason() const {
  return "timed out after " + seconds_text(deadlines_.command.value_or(std::chrono::seconds{0}));
}

}  // namespace tpush::fanout
