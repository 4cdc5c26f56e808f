// The line multiplexer: turns every worker's stdout and stderr bytes into whole,
// prefixed lines on tpush's stdout and stderr. Lines from different workers never
// tear into each other; a final line without newline is printed at the end.
// It is the event loop's output sink (fanout/output_sink.h), writing through
// the Writer thread, whose queue sets the backpressure.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "tpush/fanout/output_sink.h"
#include "tpush/output/line_splitter.h"
#include "tpush/output/writer_sink.h"

namespace tpush::output {

using fanout::Stream;

struct LineOutputOptions {
  bool prefix = true;  // false: -N, raw lines
  bool color = false;  // colour the prefix (TTY, no NO_COLOR)
  // Pad labels so the text columns line up, per stream (stdout, stderr): only
  // for a terminal. A pipe gets exactly "LABEL: TEXT", as pdsh writes it, so
  // dshbak and clubak group identical lines of workers of any label width.
  bool align_out = false;
  bool align_err = false;
  // Show control characters and escape sequences escaped (terminal_text.h),
  // per stream: a terminal without --raw. Only with a prefix (-N is raw).
  bool escape_out = false;
  bool escape_err = false;
};

class LineOutput final : public WriterSink {
 public:
  LineOutput(Writer& writer, const std::vector<std::string>& labels, LineOutputOptions opts);

  void data(std::size_t worker, Stream stream, std::string_view bytes) override;
  void end(std::size_t worker) override;
  void flush() override;
  void notice(std::string line) override;

  static constexpr std::size_t flush_threshold = 64u << 10;

 private:
  void emit(std::size_t worker, Stream stream, std::string_view line, bool newline);

  LineOutputOptions opts_;
  std::vector<std::string> prefixes_[2];  // per stream, per worker: "label:   "
  std::vector<LineSplitter> splitters_[2];
  std::string pending_[2];
};

}  // namespace tpush::output
