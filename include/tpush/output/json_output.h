// --json: JSON Lines on stdout, for scripts. One object per output line, one
// per worker as it ends, then one summary object (schema in tpush(1)):
//
//   {"type":"line","worker":"w0","host":"10.0.0.2","stream":"stdout","text":"hello"}
//   {"type":"worker","worker":"w0","host":"10.0.0.2","address":"10.0.0.2:22",
//    "outcome":"ok","exit_status":0,"signal":null,"reason":"exit 0",
//    "started":"2026-11-23T10:00:00.123Z","seconds":0.412}
//   {"type":"summary","workers":64,"ok":63,"failed":1,...,"seconds":2.1,"exit_code":1}
//
// A line is the bytes before its newline. When they are not valid UTF-8,
// "bytes" (base64) replaces "text", so every byte survives a round trip; a
// last line without a newline has "newline":false.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tpush/fanout/output_sink.h"
#include "tpush/fanout/result.h"
#include "tpush/output/line_splitter.h"
#include "tpush/output/writer_sink.h"

namespace tpush::output {

// Who a worker is, for --json and results.json.
struct WorkerIdentity {
  std::string label;
  std::string host;     // as the host list or the TPU gave it
  std::string address;  // where tpush connected: "hostname:port" (ssh_config's HostName)
};

// `s` as a JSON string, quotes included (valid UTF-8 assumed).
std::string json_string(std::string_view s);

// The objects (one line each, no newline), shared by --json and --out-dir.
std::string worker_json(const WorkerIdentity& who, const fanout::WorkerResult& r);
std::string summary_json(const std::vector<fanout::WorkerResult>& results, double seconds, int exit_code);

class JsonOutput final : public WriterSink {
 public:
  JsonOutput(Writer& writer, std::vector<WorkerIdentity> workers);

  void data(std::size_t worker, fanout::Stream stream, std::string_view bytes) override;
  void end(std::size_t worker) override;
  void finished(std::size_t worker, const fanout::WorkerResult& result) override;
  void flush() override;
  void notice(std::string line) override;

  // The closing object.
  void summary(const std::vector<fanout::WorkerResult>& results, double seconds, int exit_code);

 private:
  void emit(std::size_t worker, fanout::Stream stream, std::string_view line, bool newline);

  std::vector<WorkerIdentity> workers_;
  std::vector<std::string> heads_;             // per worker: {"type":"line","worker":..,"host":..,
  std::vector<LineSplitter> splitters_[2];     // per stream, per worker
  std::string pending_;
};

}  // namespace tpush::output
