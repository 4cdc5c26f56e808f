// One worker's output as the live view keeps it: the last line it printed (for
// its row) and its recent output, stdout and stderr in the order they came, for
// the view that opens it. The kept output is bounded: past `bound` bytes the
// oldest lines are dropped, and dropped_bytes() says how much went. No
// terminal here: raw bytes in, raw lines out (live/text makes them safe).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tpush/fanout/output_sink.h"

namespace tpush::output {

class LiveOutput {
 public:
  // A line longer than this is kept as pieces of this size.
  static constexpr std::size_t kMaxLine = 64 * 1024;

  explicit LiveOutput(std::size_t bound) : bound_(bound) {}

  void append(fanout::Stream stream, std::string_view bytes);
  // The streams ended: a last line without a newline is a line now.
  void end();

  // The last non-empty line printed on either stream, finished or not, as a
  // terminal would leave it visible (live_visible_part); raw bytes.
  std::string_view last_line() const;

  struct Line {
    std::string_view text;  // raw, without its '\n'
    fanout::Stream stream;
  };
  // What is kept, oldest first, unfinished lines last. The views point into
  // this object: valid until the next append() or end().
  std::vector<Line> lines() const;
  // Bytes of output dropped from the front to stay within the bound.
  std::uint64_t dropped_bytes() const { return dropped_; }
  std::uint64_t dropped_lines() const { return dropped_lines_; }
  // Changes with every append() or end(): lines() may differ.
  std::uint64_t generation() const { return generation_; }
  std::size_t bound() const { return bound_; }
  // Bytes held for the kept lines (the bound and a quarter, and the string's spare room).
  std::size_t memory() const { return log_.capacity() + partial_[0].capacity() + partial_[1].capacity(); }

 private:
  void keep_line(fanout::Stream stream, std::string_view text);
  void note_last(std::string_view line);

  std::size_t bound_;
  // Finished lines from head_ on, each as a stream tag ('1' or '2'), its text
  // and '\n'; the bytes before head_ are dropped ones, erased now and then.
  std::string log_;
  std::size_t head_ = 0;
  std::string partial_[2];  // the unfinished line of stdout, of stderr
  std::string last_;        // the last non-empty finished line's visible part (its first kMaxLast bytes)
  int last_stream_ = 0;     // index of the stream that printed last
  std::uint64_t dropped_ = 0;
  std::uint64_t dropped_lines_ = 0;
  std::uint64_t generation_ = 0;
};

}  // namespace tpush::output
