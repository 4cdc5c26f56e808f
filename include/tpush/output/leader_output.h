// --leader: for SPMD jobs, where every worker prints much the same. One worker
// (the leader) streams live with its prefix; every worker's output is also
// gathered, and at the end only what differs from the leader's is printed,
// grouped as -b groups it. One line on stderr names the workers that printed
// exactly what the leader did.
#pragma once

#include "tpush/fanout/output_sink.h"
#include "tpush/output/gather_output.h"
#include "tpush/output/line_output.h"

namespace tpush::output {

class LeaderOutput final : public fanout::OutputSink {
 public:
  LeaderOutput(LineOutput& live, GatherOutput& gathered, std::size_t leader)
      : live_(live), gathered_(gathered), leader_(leader) {}

  void data(std::size_t worker, fanout::Stream stream, std::string_view bytes) override {
    gathered_.data(worker, stream, bytes);
    if (worker == leader_) live_.data(worker, stream, bytes);
  }
  void end(std::size_t worker) override {
    gathered_.end(worker);
    if (worker == leader_) live_.end(worker);
  }
  void flush() override { live_.flush(); }
  void notice(std::string line) override { live_.notice(std::move(line)); }
  bool accepting() const override { return live_.accepting(); }
  bool closed() const override { return live_.closed(); }
  int wake_fd() const override { return live_.wake_fd(); }
  void clear_wake() override { live_.clear_wake(); }

  // At the end of the run: what differs from the leader (`diffs`: as unified
  // diffs against the leader's output).
  void print(bool diffs = false) { gathered_.print(leader_, diffs); }

 private:
  LineOutput& live_;
  GatherOutput& gathered_;
  std::size_t leader_;
};

}  // namespace tpush::output
