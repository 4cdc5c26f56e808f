#include "tpush/output/summary.h"

#include <algorithm>
#include <cstdio>

#include "tpush/output/exit_codes.h"

namespace tpush::output {

using fanout::Outcome;

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
