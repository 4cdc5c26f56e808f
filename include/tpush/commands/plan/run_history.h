// What earlier runs did, for `--failed` and `tpush last`. Each run is
// recorded under $XDG_STATE_HOME/tpush/ (else ~/.local/state/tpush/):
//
//   last.json            the last run, as it was
//   runs/<hash>.json     per target: every worker's latest outcome there
//
// A target is the worker options as written (-w, -x, -H, -t,
// --queued-resource, --zone, --project, --worker, --label): the same options
// name the same target; `-w 'n[1-2]'` and `-w n1,n2` are two targets. A run
// with --failed updates its target's record for the workers it ran, so
// --failed again reruns only what still fails. Files are written atomically
// and hold no secrets: -e values are replaced by "...". Failing to record
// is a warning, never a failed run.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tpush/commands/cli/options.h"
#include "tpush/fanout/result.h"

namespace tpush::commands {

struct RunRecord {
  struct Entry {
    std::string label;
    std::string outcome;  // fanout::outcome_name
    std::string reason;
    int exit_status = -1;
  };
  std::string target;        // the worker options, as written
  std::string command_line;  // tpush's argv, -e values hidden
  std::string time;          // ISO 8601, UTC
  double seconds = 0;
  int exit_code = 0;
  std::vector<Entry> workers;
};

// The directory runs are recorded in.
std::filesystem::path history_dir();
// The target of this command line (see above).
std::string target_of(const Options& o);

// Records a run: last.json, and the target's record merged with it.
void record_run(const Options& o, const std::vector<std::string>& labels,
                const std::vector<fanout::WorkerResult>& results, double seconds, int exit_code);

// The target's record (every worker's latest outcome), or nullopt.
std::optional<RunRecord> target_record(const std::string& target);
// The last run, or nullopt when none is recorded.
std::optional<RunRecord> last_run();

// The labels a target's record lists as not ok, in its order.
std::vector<std::string> not_ok_labels(const RunRecord& r);

// `tpush last`: the run's command line, time and summary, as the run printed it.
std::string describe_run(const RunRecord& r);
// `tpush last --json`: the record as stored, one JSON object and a newline.
std::string record_json(const RunRecord& r);

}  // namespace tpush::commands
