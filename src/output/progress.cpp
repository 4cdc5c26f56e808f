#include "tpush/output/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <numeric>

#include "tpush/output/writer.h"
#include "tpush/util/terminal.h"

namespace tpush::output {
namespace {


std::size_t terminal_width() { return std::max<std::size_t>(util::terminal_columns(STDERR_FILENO).value_or(80), 20); }

}  // namespace

std::string human_bytes(std::uint64_t n) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  char buf[32];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(n));
  else
    std::snprintf(buf, sizeof buf, v < 10 ? "%.1f %s" : "%.0f %s", v, units[u]);
  return buf;
}

bool Progress::stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

Progress::Progress(std::vector<std::string> labels, std::uint64_t total_per_worker, bool enabled)
    : labels_(std::move(labels)),
      workers_(labels_.size()),
      total_per_worker_(total_per_worker),
      enabled_(enabled) {}

std::string Progress::line(std::size_t width) const {
  std::uint64_t done_bytes = 0;
  std::size_t done = 0;
  std::vector<std::size_t> running;
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    done_bytes += workers_[i].bytes;
    if (workers_[i].done) ++done;
    else if (workers_[i].started) running.push_back(i);
  }
  std::string out = "tpush: " + human_bytes(done_bytes);
  if (total_per_worker_ > 0) {
    const std::uint64_t total = total_per_worker_ * workers_.size();
    out += " / " + human_bytes(total) + " (" +
           std::to_string(static_cast<int>(100.0 * static_cast<double>(done_bytes) / static_cast<double>(total))) +
           "%)";
  }
  out += ", " + std::to_string(done) + "/" + std::to_string(workers_.size()) + " workers done";
  if (!running.empty()) {
    std::sort(running.begin(), running.end(),
              [&](std::size_t a, std::size_t b) { return workers_[a].bytes < workers_[b].bytes; });
    out += ", slowest:";
    for (std::size_t k = 0; k < std::min<std::size_t>(3, running.size()); ++k) {
      const auto& w = workers_[running[k]];
      out += " " + labels_[running[k]] + " ";
      out += total_per_worker_ > 0
                 ? std::to_string(static_cast<int>(100.0 * static_cast<double>(w.bytes) /
                                                   static_cast<double>(total_per_worker_))) + "%"
                 : human_bytes(w.bytes);
    }
  }
  if (out.size() > width - 1) out.resize(width - 1);
  return out;
}

void Progress::poll(Writer& writer, std::chrono::steady_clock::time_point now) {
  if (!enabled_ || now - last_draw_ < util::redraw_interval) return;
  last_draw_ = now;
  writer.status(line(terminal_width()));
}

void Progress::clear(Writer& writer) {
  if (enabled_) writer.status("");  // the writer erases it if it is shown
}

}  // namespace tpush::output
