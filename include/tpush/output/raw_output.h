// One worker's output passed on byte for byte, as it arrives: no prefix, no
// line held back (a shell's prompt has no newline). For `tpush shell`, whose
// pseudo-terminal already merged stderr into stdout.
#pragma once

#include "tpush/output/writer_sink.h"

namespace tpush::output {

class RawOutput final : public WriterSink {
 public:
  explicit RawOutput(Writer& writer) : WriterSink(writer) {}

  void data(std::size_t worker, fanout::Stream stream, std::string_view bytes) override;
  void end(std::size_t /*worker*/) override {}
  void flush() override {}
  // On a raw terminal a newline does not return the carriage: the line ends
  // with both.
  void notice(std::string line) override;
};

}  // namespace tpush::output
