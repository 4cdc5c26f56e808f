// Cuts one worker's byte stream into whole lines.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace tpush::output {

class LineSplitter {
 public:
  // A line longer than this without a newline is emitted in pieces of this size,
  // so one runaway stream cannot hold unbounded memory (documented in tpush(1)).
  static constexpr std::size_t max_line = 16u << 20;

  // Called with each complete line, without its newline; `newline` says whether the
  // line ended with one (false only for the final piece at EOF or a split runaway line).
  using Emit = std::function<void(std::string_view line, bool newline)>;

  void append(std::string_view data, const Emit& emit);
  // End of stream: emits a final line that had no newline.
  void finish(const Emit& emit);
  bool has_partial() const { return !partial_.empty(); }

 private:
  std::string partial_;
};

}  // namespace tpush::output
