// The live view's model (--live): one row per worker with its state, times,
// last line and bounded output; the order rows are shown in; the counts for
// the header. Pure: the clock comes in as arguments, nothing is drawn here
// (live_view draws it), so unit tests drive it without a terminal.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tpush/fanout/output_sink.h"
#include "tpush/fanout/result.h"
#include "tpush/output/live/output.h"

namespace tpush::output {

enum class LivePhase { waiting, running, done };

class LiveRows {
 public:
  using Clock = std::chrono::steady_clock;

  // Output kept per worker: 1 MiB, less when many workers would hold more than
  // 256 MiB together (256 KiB each at 1,024 workers), never under 64 KiB.
  static constexpr std::size_t kOutputPerWorker = 1024 * 1024;
  static constexpr std::size_t kOutputTotal = 256 * 1024 * 1024;
  static constexpr std::size_t kOutputFloor = 64 * 1024;
  static std::size_t output_bound(std::size_t workers);

  LiveRows(std::vector<std::string> labels, std::size_t output_bound);

  std::size_t size() const { return workers_.size(); }
  // Columns the widest label takes on the screen (labels escaped as live/text does).
  std::size_t label_columns() const { return label_columns_; }

  void started(std::size_t w, Clock::time_point now);
  // Its session is ready: "connecting" becomes "running".
  void connected(std::size_t w) { workers_[w].connected = true; }
  void finished(std::size_t w, const fanout::WorkerResult& result, Clock::time_point now);
  void data(std::size_t w, fanout::Stream stream, std::string_view bytes) { workers_[w].output.append(stream, bytes); }
  void end(std::size_t w) { workers_[w].output.end(); }

  // Workers in the order the rows are shown: failures (in worker order), then
  // stragglers (running, the longest first), then the rest (in worker order).
  // Worked out again only after a worker started or finished.
  const std::vector<std::size_t>& order();
  // The order as order() last worked it out: what the screen shows now.
  const std::vector<std::size_t>& order_shown() const { return order_; }

  LivePhase phase(std::size_t w) const { return workers_[w].phase; }
  bool failed(std::size_t w) const;
  const std::string& label(std::size_t w) const { return workers_[w].label; }
  const fanout::WorkerResult& result(std::size_t w) const { return workers_[w].result; }
  const LiveOutput& output(std::size_t w) const { return workers_[w].output; }

  // "waiting", "connecting", "running", "ok", "exit 3", "signal KILL", "unreachable",
  // "timed out", "lost", "interrupted", "not started", "stopped".
  std::string state_text(std::size_t w) const;
  // The exit status ("0", "3"), the signal's name ("KILL"), or "".
  std::string exit_text(std::size_t w) const;
  // How long it ran: "" while waiting, whole seconds while running ("7s"),
  // tenths once done ("2.3s"); minutes past 60 s ("1m05s"), hours past 1 h ("2h03m").
  std::string time_text(std::size_t w, Clock::time_point now) const;
  // The last line it printed, safe for the terminal; the reason it ended
  // when it printed nothing ("connect refused").
  std::string last_text(std::size_t w) const;
  // "3 running, 60 ok, 1 failed, 2 unreachable, 1 waiting": non-zero counts only.
  std::string counts_text() const;
  std::size_t running() const { return running_; }

 private:
  struct Worker {
    Worker(std::string l, std::size_t bound) : label(std::move(l)), output(bound) {}
    std::string label;
    LivePhase phase = LivePhase::waiting;
    bool connected = false;  // running: its command has begun (else still connecting)
    Clock::time_point started{};
    Clock::time_point ended{};
    std::uint64_t start_seq = 0;  // the order workers started in
    fanout::WorkerResult result;
    LiveOutput output;
  };

  std::vector<Worker> workers_;
  std::vector<std::size_t> order_;
  bool order_stale_ = true;
  std::uint64_t starts_ = 0;
  std::size_t running_ = 0;
  std::size_t label_columns_ = 0;
};

// Durations as the view writes them (time_text's rules; `running`: whole seconds).
std::string live_duration(double seconds, bool running);

}  // namespace tpush::output
