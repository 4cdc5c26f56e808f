#include "tpush/output/status_line.h"

#include "tpush/output/writer.h"
#include "tpush/util/terminal.h"

namespace tpush::output {
namespace {

constexpr auto kFirstDraw = std::chrono::seconds(1);

}  // namespace

StatusLine::StatusLine(const std::vector<std::string>& labels, bool enabled)
    : labels_(labels), enabled_(enabled), is_running_(labels.size(), 0), started_at_(labels.size()) {}

void StatusLine::begin_run(std::size_t run_size, Clock::time_point now) {
  run_size_ = run_size;
  done_ = failed_ = running_ = 0;
  start_order_.clear();
  run_start_ = now;
}

void StatusLine::started(std::size_t worker, Clock::time_point now) {
  is_running_[worker] = 1;
  started_at_[worker] = now;
  start_order_.push_back(worker);
  ++running_;
}

void StatusLine::finished(std::size_t worker, bool ok) {
  if (is_running_[worker]) --running_;
  is_running_[worker] = 0;
  ++done_;
  if (!ok) ++failed_;
}

std::string StatusLine::line(Clock::time_point now, std::size_t width) const {
  std::string out = "tpush: " + std::to_string(done_) + "/" + std::to_string(run_size_) + " done";
  if (failed_) out += ", " + std::to_string(failed_) + " failed";
  out += ", " + std::to_string(running_) + " running";
  for (std::size_t w : start_order_) {
    if (!is_running_[w]) continue;
    const auto secs = std::chrono::duration_cast<std::chrono::seconds>(now - started_at_[w]).count();
    out += "; slowest " + labels_[w] + " (" + std::to_string(secs) + " s)";
    break;
  }
  if (width > 1 && out.size() > width - 1) out.resize(width - 1);
  return out;
}

void StatusLine::poll(Writer& writer, Clock::time_point now) {
  if (!enabled_ || now - run_start_ < kFirstDraw || now - last_draw_ < util::redraw_interval) return;
  last_draw_ = now;
  while (!start_order_.empty() && !is_running_[start_order_.front()]) start_order_.pop_front();
  writer.status(line(now, util::terminal_columns(2).value_or(80)));
}

void StatusLine::clear(Writer& writer) {
  if (enabled_) writer.status("");  // the writer erases it if it is shown
}

}  // namespace tpush::output
