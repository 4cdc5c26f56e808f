// Where jobs put what the workers print, and how the event loop learns what
// the output side can take. The output layer implements it (prefixed lines,
// and the other output modes); jobs and the scheduler see only this.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "tpush/fanout/result.h"

namespace tpush::fanout {

enum class Stream { out = 1, err = 2 };

// 0 for stdout, 1 for stderr: an index into per-stream arrays.
inline std::size_t index_of(Stream s) { return s == Stream::out ? 0 : 1; }

class OutputSink {
 public:
  virtual ~OutputSink() = default;

  // Bytes worker `worker` printed on its stdout or stderr.
  virtual void data(std::size_t worker, Stream stream, std::string_view bytes) = 0;
  // The worker's streams ended: a last line without a newline may now go out.
  virtual void end(std::size_t worker) = 0;
  // The worker started (its job began), and how it ended: for sinks that
  // report workers, not only lines (--json, a status line). Default: nothing.
  virtual void started(std::size_t /*worker*/) {}
  // The worker's session is ready and its command begins (the live view's
  // "connecting" ends). Default: nothing.
  virtual void connected(std::size_t /*worker*/) {}
  virtual void finished(std::size_t /*worker*/, const WorkerResult& /*result*/) {}
  // Called after every batch of events, and once at the end: hand on what is held.
  virtual void flush() = 0;
  // One line of tpush's own for stderr ("tpush: interrupt sent ..."), in order
  // with the workers' lines.
  virtual void notice(std::string line) = 0;

  // False while the output cannot take more: jobs stop reading their workers
  // (backpressure) until wake_fd() says otherwise.
  virtual bool accepting() const = 0;
  // True once the reader of tpush's output went away: the run ends (exit 141).
  virtual bool closed() const = 0;
  // Readable when accepting() may have become true again, or closed() did;
  // -1 when the sink never blocks.
  virtual int wake_fd() const = 0;
  virtual void clear_wake() = 0;
};

}  // namespace tpush::fanout
