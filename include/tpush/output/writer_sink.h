// The part every sink that prints through the Writer shares: backpressure,
// and the reader going away, are the Writer's.
#pragma once

#include "tpush/fanout/output_sink.h"
#include "tpush/output/writer.h"

namespace tpush::output {

class WriterSink : public fanout::OutputSink {
 public:
  bool accepting() const override { return !writer_.congested() && !writer_.reader_gone(); }
  bool closed() const override { return writer_.reader_gone(); }
  int wake_fd() const override { return writer_.wake_fd(); }
  void clear_wake() override { writer_.clear_wake(); }

 protected:
  explicit WriterSink(Writer& writer) : writer_(writer) {}

  Writer& writer_;
};

}  // namespace tpush::output
