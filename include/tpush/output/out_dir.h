// --out-dir DIR (pssh's -o/-e, gcloud's --output-directory): every worker's
// stdout and stderr also go, byte for byte and as they arrive, to
// DIR/LABEL.out and DIR/LABEL.err; DIR/results.json holds the outcomes at the
// end. It wraps the sink that shows the output (lines, gathered, JSON), which
// sees everything unchanged.
//
// A file that cannot be written (disk full, ...) is reported at once, on
// stderr, naming the worker and the file; that worker's output still reaches
// the terminal, and the run's exit status says the files are incomplete.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "tpush/fanout/output_sink.h"
#include "tpush/output/json_output.h"

namespace tpush::output {

class OutDir final : public fanout::OutputSink {
 public:
  // Creates DIR (and its parents). SetupError when it cannot.
  OutDir(fanout::OutputSink& shown, std::filesystem::path dir, std::vector<WorkerIdentity> workers);
  ~OutDir() override;
  OutDir(const OutDir&) = delete;
  OutDir& operator=(const OutDir&) = delete;

  void data(std::size_t worker, fanout::Stream stream, std::string_view bytes) override;
  void end(std::size_t worker) override;
  void started(std::size_t worker) override;
  void connected(std::size_t worker) override { shown_.connected(worker); }
  void finished(std::size_t worker, const fanout::WorkerResult& result) override;
  void flush() override { shown_.flush(); }
  void notice(std::string line) override { shown_.notice(std::move(line)); }
  bool accepting() const override { return shown_.accepting(); }
  bool closed() const override { return shown_.closed(); }
  int wake_fd() const override { return shown_.wake_fd(); }
  void clear_wake() override { shown_.clear_wake(); }

  // Writes DIR/results.json (atomically): every worker's object, then the
  // summary. Returns false (after saying why) when it could not.
  bool write_results(const std::vector<std::size_t>& workers, const std::vector<fanout::WorkerResult>& results,
                     double seconds, int exit_code);
  // True when some file could not be written completely.
  bool incomplete() const { return incomplete_; }
  // "DIR/LABEL.out" (labels with '/' have it replaced by '_').
  std::filesystem::path file_of(std::size_t worker, fanout::Stream stream) const;

 private:
  void close_files(std::size_t worker);
  void failed(std::size_t worker, fanout::Stream stream, int err);

  fanout::OutputSink& shown_;
  std::filesystem::path dir_;
  std::vector<WorkerIdentity> workers_;
  std::vector<int> fds_[2];  // per stream, per worker: -1 when closed (or failed)
  bool incomplete_ = false;
};

}  // namespace tpush::output
