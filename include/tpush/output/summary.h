// The per-run summary on stderr, and the exit code that sums up the run.
#pragma once

#include <string>
#include <vector>

#include "tpush/fanout/result.h"

namespace tpush::output {

// brief: the head line, then one line per distinct reason naming its workers
// as a node set (the prompt's summary after each line).
enum class SummaryMode { automatic, always, quiet, brief };

// Mixing rule: interrupted (130) wins; else any worker unreachable, timed out, lost
// or not started gives 255; else any failed command gives 1; else 0.
int exit_code_for(const std::vector<fanout::WorkerResult>& results, bool interrupted);

// "tpush: 64 workers: 62 ok, 1 failed, 1 unreachable, 0 timed out (1.23s)" and one
// line per worker that did not succeed (every worker with `always`). Empty when
// mode is quiet and everything succeeded.
std::string format_summary(const std::vector<fanout::WorkerResult>& results,
                           const std::vector<std::string>& labels, double seconds,
                           SummaryMode mode);

}  // namespace tpush::output
