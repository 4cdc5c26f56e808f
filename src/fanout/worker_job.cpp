#include "tpush/fanout/worker_job.h"

#include "tpush/util/string.h"

namespace tpush::fanout {

void WorkerJob::begin(Clock::time_point now) {
  if (started_) return;
  started_ = true;
  start_ = now;
  result_.started = std::chrono::system_clock::now();
}

void WorkerJob::interrupt() {
  finish(Outcome::interrupted, started_ ? "interrupted" : "not started (interrupted)");
}

void WorkerJob::finish(Outcome outcome, std::string reason, int exit_status, std::string signal) {
  if (finished_) return;
  finished_ = true;
  release();
  result_.outcome = outcome;
  result_.reason = std::move(reason);
  result_.exit_status = exit_status;
  result_.signal = std::move(signal);
  result_.reached = reached();
  result_.seconds = started_ ? std::chrono::duration<double>(now_() - start_).count() : 0;
}

bool WorkerJob::command_deadline_passed(Clock::time_point now, Clock::time_point since) const {
  return deadlines_.command && now - since >= *deadlines_.command;
}

std::string WorkerJob::timed_out_reason() const {
  return "timed out after " + util::seconds_text(deadlines_.command.value_or(std::chrono::seconds{0}));
}

}  // namespace tpush::fanout
