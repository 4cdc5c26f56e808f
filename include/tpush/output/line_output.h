// The line multiplexer: turns every worker's stdout and stderr bytes into whole,
// prefixed lines on tpush's stdout and stderr. Lines from different workers never
// tear into each other; a final line without newline is printed at the end.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "tpush/output/line_splitter.h"
#include "tpush/output/writer.h"

namespace tpush::output {

enum class Stream { out = 1, err = 2 };

struct LineOutputOptions {
  bool prefix = true;  // false: -N, raw lines
  bool color = false;  // colour the prefix (TTY, no NO_COLOR)
};

class LineOutput {
 public:
  LineOutput(Writer& writer, const std::vector<std::string>& labels, LineOutputOptions opts);

  void data(std::size_t worker, Stream stream, std::string_view bytes);
  // The worker's streams ended: print any final partial lines.
  void finish(std::size_t worker);
  // Hands everything formatted since the last flush to the writer.
  void flush();

  static constexpr std::size_t flush_threshold = 64u << 10;

 private:
  void emit(std::size_t worker, Stream stream, std::string_view line, bool newline);

  Writer& writer_;
  LineOutputOptions opts_;
  std::vector<std::string> prefixes_[2];  // per stream, per worker: "label:   "
  std::vector<LineSplitter> splitters_[2];
  std::string pending_[2];
};

}  // namespace tpush::output
