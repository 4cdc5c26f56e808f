#include "tpush/output/summary.h"

#include <algorithm>
#include <cstdio>

#include "tpush/inventory/node_set.h"
#include "tpush/output/exit_codes.h"

namespace tpush::output {

using fanout::Outcome;

namespace {

// "tpush: w[3,7]: exit 1", one line per distinct reason, in order of first worker.
std::string by_reason(const std::vector<fanout::WorkerResult>& results, const std::vector<std::string>& labels) {
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (results[i].outcome == Outcome::ok) continue;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == results[i].reason; });
    if (it == groups.end()) it = groups.insert(groups.end(), {results[i].reason, {}});
    it->second.push_back(labels[i]);
  }
  std::string out;
  for (const auto& [reason, who] : groups) out += "tpush: " + inventory::fold_node_set(who) + ": " + reason + "\n";
  return out;
}

}  // namespace

int exit_code_for(const std::vector<fanout::WorkerResult>& results, bool interrupted) {
  bool failed = false, unreachable = false;
  for (const auto& r : results) {
    switch (r.outcome) {
      case Outcome::ok:
        break;
      case Outcome::failed:
        failed = true;
        break;
      case Outcome::interrupted:
        interrupted = true;
        break;
      case Outcome::unreachable:
      case Outcome::timed_out:
      case Outcome::lost:
      case Outcome::not_started:
        unreachable = true;
        break;
      case Outcome::stopped:  // the failure that stopped them decides
        break;
    }
  }
  if (interrupted) return exit_code::interrupted;
  if (unreachable) return exit_code::unreachable;
  return failed ? exit_code::command_failed : exit_code::ok;
}

std::string format_summary(const std::vector<fanout::WorkerResult>& results,
                           const std::vector<std::string>& labels, double seconds,
                           SummaryMode mode) {
  std::size_t count[fanout::kOutcomes] = {};
  for (const auto& r : results) ++count[static_cast<int>(r.outcome)];
  const bool all_ok = count[static_cast<int>(Outcome::ok)] == results.size();
  if (mode == SummaryMode::quiet && all_ok) return {};

  auto n = [&](Outcome o) { return count[static_cast<int>(o)]; };
  char head[256];
  std::snprintf(head, sizeof head, "tpush: %zu worker%s: %zu ok, %zu failed, %zu unreachable, %zu timed out",
                results.size(), results.size() == 1 ? "" : "s", n(Outcome::ok), n(Outcome::failed),
                n(Outcome::unreachable), n(Outcome::timed_out));
  std::string out = head;
  if (n(Outcome::lost)) out += ", " + std::to_string(n(Outcome::lost)) + " lost";
  const std::size_t cut = n(Outcome::interrupted) + n(Outcome::not_started);
  if (cut) out += ", " + std::to_string(cut) + " interrupted";
  if (n(Outcome::stopped)) out += ", " + std::to_string(n(Outcome::stopped)) + " stopped";
  std::snprintf(head, sizeof head, " (%.2fs)\n", seconds);
  out += head;

  if (mode == SummaryMode::brief) return out + by_reason(results, labels);

  std::size_t width = 0;
  for (std::size_t i = 0; i < results.size(); ++i)
    if (mode == SummaryMode::always || results[i].outcome != Outcome::ok)
      width = std::max(width, labels[i].size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    if (mode != SummaryMode::always && r.outcome == Outcome::ok) continue;
    out += "tpush: " + labels[i] + ":" + std::string(width - labels[i].size() + 1, ' ');
    out += r.outcome == Outcome::ok ? "ok" : r.reason;
    out += '\n';
  }
  return out;
}

}  // namespace tpush::output
