// The live status of a run on a terminal (stderr, not with -q), once the run
// has lasted a second, redrawn in place about five times a second:
//
//   tpush: 37/64 done, 1 failed, 26 running; slowest 127.0.1.12 (41 s)
//
// "slowest" is the worker that has been running longest. The Writer erases
// the line before any output line, so nothing is torn.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <string>
#include <vector>

namespace tpush::output {

class Writer;

class StatusLine {
 public:
  using Clock = std::chrono::steady_clock;

  StatusLine(const std::vector<std::string>& labels, bool enabled);

  // Workers as a run starts and ends them; `run_size`: workers in the run.
  void begin_run(std::size_t run_size, Clock::time_point now);
  void started(std::size_t worker, Clock::time_point now);
  void finished(std::size_t worker, bool ok);

  // Redraws through `writer` when due.
  void poll(Writer& writer, Clock::time_point now);
  // Erases the line (before the summary).
  void clear(Writer& writer);
  // The line as it reads at `now`, cut to `width` columns (tests).
  std::string line(Clock::time_point now, std::size_t width) const;

 private:
  const std::vector<std::string>& labels_;
  bool enabled_;
  std::size_t run_size_ = 0, done_ = 0, failed_ = 0, running_ = 0;
  std::vector<char> is_running_;
  std::vector<Clock::time_point> started_at_;
  std::deque<std::size_t> start_order_;  // running workers, oldest first (ended ones dropped lazily)
  Clock::time_point run_start_{}, last_draw_{};
};

}  // namespace tpush::output
