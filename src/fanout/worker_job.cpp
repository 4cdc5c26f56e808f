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

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::ok: return "ok";
    case Outcome::failed: return "failed";
    case Outcome::unreachable: return "unreachable";
    case Outcome::timed_out: return "timed_out";
    case Outcome::lost: return "lost";
    case Outcome::interrupted: return "interrupted";
    case Outcome::not_started: return "not_started";
    case Outcome::stopped: return "stopped";
  }
  return "?";
}

std::optional<Outcome> outcome_from_name(std::string_view name) {
  for (int k = 0; k < kOutcomes; ++k)
    if (name == outcome_name(static_cast<Outcome>(k))) return static_cast<Outcome>(k);
  return std::nullopt;
}

}  // namespace tpush::fanout
