#include "tpush/output/live/rows.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "tpush/output/live/text.h"

namespace tpush::output {
namespace {

const char* live_outcome_text(fanout::Outcome o) {
  switch (o) {
    case fanout::Outcome::ok: return "ok";
    case fanout::Outcome::failed: return "failed";
    case fanout::Outcome::unreachable: return "unreachable";
    case fanout::Outcome::timed_out: return "timed out";
    case fanout::Outcome::lost: return "lost";
    case fanout::Outcome::interrupted: return "interrupted";
    case fanout::Outcome::not_started: return "not started";
    case fanout::Outcome::stopped: return "stopped";
  }
  return "?";
}

// The header's order: what is going on, what went well, what did not.
constexpr fanout::Outcome kLiveCountOrder[] = {
    fanout::Outcome::ok,          fanout::Outcome::failed,      fanout::Outcome::unreachable,
    fanout::Outcome::timed_out,   fanout::Outcome::lost,        fanout::Outcome::interrupted,
    fanout::Outcome::stopped,     fanout::Outcome::not_started,
};

}  // namespace

std::size_t LiveRows::output_bound(std::size_t workers) {
  const std::size_t share = kOutputTotal / std::max<std::size_t>(workers, 1);
  return std::clamp(share, kOutputFloor, kOutputPerWorker);
}

LiveRows::LiveRows(std::vector<std::string> labels, std::size_t output_bound) {
  workers_.reserve(labels.size());
  for (auto& l : labels) {
    label_columns_ = std::max(label_columns_, live_columns(live_safe_text(l)));
    workers_.emplace_back(std::move(l), output_bound);
  }
}

void LiveRows::started(std::size_t w, Clock::time_point now) {
  Worker& x = workers_[w];
  if (x.phase != LivePhase::running) ++running_;
  x.phase = LivePhase::running;
  x.started = now;
  x.start_seq = ++starts_;
  order_stale_ = true;
}

void LiveRows::finished(std::size_t w, const fanout::WorkerResult& result, Clock::time_point now) {
  Worker& x = workers_[w];
  if (x.phase == LivePhase::running) --running_;
  x.phase = LivePhase::done;
  x.ended = now;
  x.result = result;
  order_stale_ = true;
}

bool LiveRows::failed(std::size_t w) const {
  return workers_[w].phase == LivePhase::done && workers_[w].result.outcome != fanout::Outcome::ok;
}

const std::vector<std::size_t>& LiveRows::order() {
  if (!order_stale_) return order_;
  order_stale_ = false;
  order_.clear();
  order_.reserve(workers_.size());
  std::vector<std::size_t> running, rest;
  for (std::size_t w = 0; w < workers_.size(); ++w) {
    if (failed(w)) order_.push_back(w);
    else if (workers_[w].phase == LivePhase::running) running.push_back(w);
    else rest.push_back(w);
  }
  std::sort(running.begin(), running.end(),
            [this](std::size_t a, std::size_t b) { return workers_[a].start_seq < workers_[b].start_seq; });
  order_.insert(order_.end(), running.begin(), running.end());
  order_.insert(order_.end(), rest.begin(), rest.end());
  return order_;
}

std::string LiveRows::state_text(std::size_t w) const {
  const Worker& x = workers_[w];
  if (x.phase == LivePhase::waiting) return "waiting";
  if (x.phase == LivePhase::running) return x.connected ? "running" : "connecting";
  if (x.result.outcome == fanout::Outcome::failed) {
    if (!x.result.signal.empty()) return "signal " + x.result.signal;
    if (x.result.exit_status >= 0) return "exit " + std::to_string(x.result.exit_status);
  }
  return live_outcome_text(x.result.outcome);
}

std::string LiveRows::exit_text(std::size_t w) const {
  const Worker& x = workers_[w];
  if (x.phase != LivePhase::done) return "";
  if (!x.result.signal.empty()) return x.result.signal;
  return x.result.exit_status >= 0 ? std::to_string(x.result.exit_status) : "";
}

std::string live_duration(double seconds, bool running) {
  char text[32];
  if (seconds < 60) {
    if (running) std::snprintf(text, sizeof text, "%ds", static_cast<int>(seconds));
    else std::snprintf(text, sizeof text, "%.1fs", std::floor(seconds * 10) / 10);
  } else if (seconds < 3600) {
    const int s = static_cast<int>(seconds);
    std::snprintf(text, sizeof text, "%dm%02ds", s / 60, s % 60);
  } else {
    const int m = static_cast<int>(seconds / 60);
    std::snprintf(text, sizeof text, "%dh%02dm", m / 60, m % 60);
  }
  return text;
}

std::string LiveRows::time_text(std::size_t w, Clock::time_point now) const {
  const Worker& x = workers_[w];
  switch (x.phase) {
    case LivePhase::waiting: return "";
    case LivePhase::running: return live_duration(std::chrono::duration<double>(now - x.started).count(), true);
    case LivePhase::done: break;
  }
  if (x.result.outcome == fanout::Outcome::not_started) return "";
  const double seconds = x.result.seconds > 0 ? x.result.seconds
                                              : std::chrono::duration<double>(x.ended - x.started).count();
  return live_duration(std::max(seconds, 0.0), false);
}

std::string LiveRows::last_text(std::size_t w) const {
  const Worker& x = workers_[w];
  const std::string_view line = x.output.last_line();
  if (line.empty() && x.phase == LivePhase::done && x.result.outcome != fanout::Outcome::ok)
    return live_safe_text(x.result.reason);
  return live_safe_text(line);
}

std::string LiveRows::counts_text() const {
  std::size_t by_outcome[fanout::kOutcomes] = {};
  std::size_t waiting = 0, connecting = 0;
  for (const Worker& x : workers_) {
    if (x.phase == LivePhase::done) ++by_outcome[static_cast<int>(x.result.outcome)];
    else if (x.phase == LivePhase::waiting) ++waiting;
    else if (!x.connected) ++connecting;
  }
  std::string out;
  const auto add = [&](std::size_t n, const char* what) {
    if (n == 0) return;
    if (!out.empty()) out += ", ";
    out += std::to_string(n) + " " + what;
  };
  add(running_ - connecting, "running");
  add(connecting, "connecting");
  for (const fanout::Outcome o : kLiveCountOrder) add(by_outcome[static_cast<int>(o)], live_outcome_text(o));
  add(waiting, "waiting");
  return out;
}

}  // namespace tpush::output
