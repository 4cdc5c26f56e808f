// A one-line transfer progress display for cp and get, on stderr and only when
// stderr is a terminal: bytes done / total, workers done, the slowest workers.
// Jobs update their counters; poll() redraws at most about 5 times a second.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tpush::output {

class Writer;

struct WorkerProgress {
  std::uint64_t bytes = 0;
  bool started = false;
  bool done = false;
};

class Progress {
 public:
  // `total_per_worker`: bytes each worker must receive (0 when unknown, as for get).
  // `enabled`: draw at all (normally: stderr is a terminal).
  Progress(std::vector<std::string> labels, std::uint64_t total_per_worker, bool enabled);

  WorkerProgress& worker(std::size_t i) { return workers_[i]; }
  // What a copy job calls with worker i's bytes so far and whether it is done.
  std::function<void(std::uint64_t bytes, bool done)> reporter(std::size_t i) {
    return [this, i](std::uint64_t bytes, bool done) {
      WorkerProgress& w = workers_[i];
      w.started = true;
      w.bytes = bytes;
      w.done = w.done || done;
    };
  }
  bool enabled() const { return enabled_; }
  // Redraws through `writer` (stderr, in order with worker lines) when due.
  void poll(Writer& writer, std::chrono::steady_clock::time_point now);
  // Erases the line (before the summary).
  void clear(Writer& writer);
  // The line as it would be drawn (tests).
  std::string line(std::size_t width) const;

  static bool stderr_is_terminal();

 private:
  std::vector<std::string> labels_;
  std::vector<WorkerProgress> workers_;
  std::uint64_t total_per_worker_;
  bool enabled_;
  std::chrono::steady_clock::time_point last_draw_{};
};

// "1.5 GiB", "320 KiB", "12 B".
std::string human_bytes(std::uint64_t n);

}  // namespace tpush::output
