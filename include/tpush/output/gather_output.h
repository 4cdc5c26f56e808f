// -b/--gather: nothing while the workers run; then each distinct output once,
// under a header naming its workers as a folded node set, in the order of each
// group's first worker:
//
//   ---------------
//   w[0-3,5-7] (7)
//   ---------------
//   <the output, byte for byte>
//
// stdout groups go to stdout, stderr groups to stderr. On stdout, workers that
// printed nothing are a group too, "(no output)". A worker's exit status is
// in the summary, not in its group.
//
// --diff: the reference group (the most common output; with --leader, the
// leader's) as above, then each other group as a unified diff against it
// (unified_diff.h), named as clush --diff names them:
//
//   --- w[0-3,5-7] (7)
//   +++ w4
//   @@ -1,2 +1,2 @@
//    step 1
//   -step 2
//   +diverged
//
// A worker that printed nothing is compared as an empty output. On stderr,
// where -b shows only what was said, an empty reference is not printed (its
// workers are on the "---" lines) and nothing is when no worker said anything.
//
// Memory: a worker's output is held until it ends; then only one copy per
// distinct output is kept (outputs with the same SHA-256 are the same).
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tpush/fanout/output_sink.h"
#include "tpush/output/writer_sink.h"

namespace tpush::output {

class GatherOutput final : public WriterSink {
 public:
  // `escape`, per stream (stdout, stderr): the output goes to a terminal, and
  // is shown escaped (terminal_text.h) so it cannot rewrite a header.
  GatherOutput(Writer& writer, std::vector<std::string> labels, std::array<bool, 2> escape = {});

  void data(std::size_t worker, fanout::Stream stream, std::string_view bytes) override;
  void end(std::size_t worker) override;
  void flush() override {}
  void notice(std::string line) override { writer_.write(2, std::move(line)); }

  // Prints the groups (once, at the end of the run). Workers that never ended
  // (not started) count as having printed nothing. With a `leader` (whose
  // output was shown live), its group is not printed again: one line on
  // stderr names the workers that printed the same.
  // `diffs` (--diff): the reference output (the leader's, else the most
  // common) once, then every other distinct output as a unified diff against it.
  void print(std::optional<std::size_t> leader = std::nullopt, bool diffs = false);

  // The groups of one stream: each distinct output and its workers, in the order
  // of their first worker. Exposed for the leader view and for tests.
  struct Group {
    std::vector<std::size_t> workers;
    std::string output;
  };
  std::vector<Group> groups(fanout::Stream stream) const;

  // The header block for `workers` (folded labels and the count).
  std::string header(const std::vector<std::size_t>& workers) const;
  // "w[0-3,5] (5)"; one worker: "w4" (as clush -b writes them)
  std::string folded(const std::vector<std::size_t>& workers) const;

 private:
  void settle(std::size_t worker, int s);
  static std::optional<std::size_t> group_of(const std::vector<Group>& all, std::size_t worker);
  static std::size_t most_common(const std::vector<Group>& all);
  void same_as_leader(fanout::Stream stream, const Group& group, std::size_t leader);
  std::string block(fanout::Stream stream, const Group& group) const;
  std::string gathered(fanout::Stream stream, const std::vector<Group>& all, std::optional<std::size_t> lead) const;
  std::string diffed(fanout::Stream stream, const std::vector<Group>& all, std::optional<std::size_t> lead) const;

  std::vector<std::string> labels_;
  std::array<bool, 2> escape_;
  std::array<std::vector<std::string>, 2> live_;  // per stream, per worker: until it ends
  std::array<std::vector<int>, 2> group_of_;      // per stream, per worker: -1 until it ends
  std::array<std::vector<std::string>, 2> distinct_;                        // per stream: each distinct output
  std::array<std::unordered_map<std::string, std::size_t>, 2> by_digest_;   // SHA-256 -> index in distinct_
  bool printed_ = false;
};

}  // namespace tpush::output
