#include "tpush/output/gather_output.h"

#include <openssl/evp.h>

#include <algorithm>

#include "tpush/inventory/node_set.h"
#include "tpush/output/terminal_text.h"
#include "tpush/output/unified_diff.h"

namespace tpush::output {
namespace {

std::string sha256(std::string_view bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<const char*>(md), len);
}


}  // namespace

GatherOutput::GatherOutput(Writer& writer, std::vector<std::string> labels, std::array<bool, 2> escape)
    : WriterSink(writer), labels_(std::move(labels)), escape_(escape) {
  for (int s = 0; s < 2; ++s) {
    live_[s].resize(labels_.size());
    group_of_[s].assign(labels_.size(), -1);
  }
}

void GatherOutput::data(std::size_t worker, fanout::Stream stream, std::string_view bytes) {
  live_[index_of(stream)][worker].append(bytes);
}

void GatherOutput::end(std::size_t worker) {
  settle(worker, 0);
  settle(worker, 1);
}

// The worker's output on stream `s` is complete: keep one copy per distinct output.
void GatherOutput::settle(std::size_t worker, int s) {
  if (group_of_[s][worker] >= 0) return;
  std::string& out = live_[s][worker];
  const auto [it, fresh] = by_digest_[s].try_emplace(sha256(out), distinct_[s].size());
  if (fresh) distinct_[s].push_back(std::move(out));
  group_of_[s][worker] = static_cast<int>(it->second);
  out = std::string();
}

std::vector<GatherOutput::Group> GatherOutput::groups(fanout::Stream stream) const {
  const int s = index_of(stream);
  std::vector<Group> out;
  // Workers that never ended printed nothing, as those that printed nothing did:
  // they join the empty output's group (or make it, after every distinct one).
  const auto empty = by_digest_[s].find(sha256(""));
  const std::size_t silent = empty != by_digest_[s].end() ? empty->second : distinct_[s].size();
  std::vector<int> slot(distinct_[s].size() + 1, -1);  // distinct index -> group
  for (std::size_t w = 0; w < labels_.size(); ++w) {
    const int g = group_of_[s][w];
    const std::size_t key = g < 0 ? silent : static_cast<std::size_t>(g);
    if (slot[key] < 0) {
      slot[key] = static_cast<int>(out.size());
      out.push_back({{}, key < distinct_[s].size() ? distinct_[s][key] : std::string()});
    }
    out[static_cast<std::size_t>(slot[key])].workers.push_back(w);  // in order: sorted
  }
  return out;
}

std::string GatherOutput::folded(const std::vector<std::size_t>& workers) const {
  std::vector<std::string> names;
  names.reserve(workers.size());
  for (std::size_t w : workers) names.push_back(labels_[w]);
  const std::string set = inventory::fold_node_set(names);
  return workers.size() == 1 ? set : set + " (" + std::to_string(workers.size()) + ")";
}

std::string GatherOutput::header(const std::vector<std::size_t>& workers) const {
  const std::string rule(15, '-');
  return rule + "\n" + folded(workers) + "\n" + rule + "\n";
}

void GatherOutput::print(std::optional<std::size_t> leader, bool diffs) {
  if (printed_) return;
  printed_ = true;
  for (auto stream : {fanout::Stream::out, fanout::Stream::err}) {
    const std::vector<Group> all = groups(stream);
    const std::optional<std::size_t> lead = leader ? group_of(all, *leader) : std::nullopt;
    if (lead) same_as_leader(stream, all[*lead], *leader);
    writer_.write(stream == fanout::Stream::out ? 1 : 2, diffs ? diffed(stream, all, lead) : gathered(stream, all, lead));
  }
}

std::optional<std::size_t> GatherOutput::group_of(const std::vector<Group>& all, std::size_t worker) {
  for (std::size_t g = 0; g < all.size(); ++g)
    if (std::find(all[g].workers.begin(), all[g].workers.end(), worker) != all[g].workers.end()) return g;
  return std::nullopt;
}

// One line on stderr for the workers that printed what the leader did (their
// output was shown live already); nothing when the leader stood alone or, on
// stderr, said nothing.
void GatherOutput::same_as_leader(fanout::Stream stream, const Group& group, std::size_t leader) {
  if (group.workers.size() < 2 || (group.output.empty() && stream == fanout::Stream::err)) return;
  writer_.write(2, "tpush: " + std::string(stream == fanout::Stream::out ? "stdout" : "stderr") + " of " +
                       folded(group.workers) + ": the same as the leader " + labels_[leader] + "'s\n");
}

// A group as -b prints it: the header, then the output (escaped on a terminal).
std::string GatherOutput::block(fanout::Stream stream, const Group& group) const {
  std::string text = header(group.workers);
  if (group.output.empty()) return text + "(no output)\n";
  text += escape_[index_of(stream)] ? for_terminal(group.output) : group.output;
  if (group.output.back() != '\n') text += '\n';
  return text;
}

// -b: every group but the leader's; on stderr, only what was said.
std::string GatherOutput::gathered(fanout::Stream stream, const std::vector<Group>& all,
                                   std::optional<std::size_t> lead) const {
  std::string text;
  for (std::size_t g = 0; g < all.size(); ++g)
    if (g != lead && !(all[g].output.empty() && stream == fanout::Stream::err)) text += block(stream, all[g]);
  return text;
}

// --diff: the reference group as -b prints it (not again when it is the
// leader's, shown live; not on stderr when it said nothing), then each other
// group as a unified diff against it, in the order of their first worker.
// Workers that printed nothing are compared as an empty output.
std::string GatherOutput::diffed(fanout::Stream stream, const std::vector<Group>& all,
                                 std::optional<std::size_t> lead) const {
  const bool silent = std::all_of(all.begin(), all.end(), [](const Group& g) { return g.output.empty(); });
  if (all.empty() || (silent && stream == fanout::Stream::err)) return {};
  const std::size_t ref = lead ? *lead : most_common(all);
  std::string text;
  if (!lead && !(all[ref].output.empty() && stream == fanout::Stream::err)) text += block(stream, all[ref]);
  DiffOptions options;
  if (escape_[index_of(stream)]) options.append_line = append_for_terminal;
  for (std::size_t g = 0; g < all.size(); ++g) {
    if (g == ref) continue;
    text += "--- " + folded(all[ref].workers) + "\n+++ " + folded(all[g].workers) + "\n";
    text += unified_diff(all[ref].output, all[g].output, options).hunks;
  }
  return text;
}

// The group with the most workers; on a tie, the one whose first worker comes first.
std::size_t GatherOutput::most_common(const std::vector<Group>& all) {
  std::size_t best = 0;
  for (std::size_t g = 1; g < all.size(); ++g)
    if (all[g].workers.size() > all[best].workers.size()) best = g;
  return best;
}

}  // namespace tpush::output
