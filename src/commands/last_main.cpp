#include <iostream>

#include "tpush/commands/cli/subcommands.h"
#include "tpush/commands/plan/run_history.h"
#include "tpush/util/error.h"

namespace tpush::commands {

int last_main(Options& o, int /*signal_fd*/) {
  SubcommandSpec spec;
  spec.description =
      "show the last run's summary again: its command line, when it ran, and how each worker ended. With worker "
      "options (-t, -w, ...), the last outcome of each of those workers, as --failed sees them.";
  spec.takes_args = false;
  if (!parse_subcommand(o, spec)) return 0;
  const std::string target = target_of(o);
  const auto record = target.empty() ? last_run() : target_record(target);
  if (!record)
    throw UsageError(target.empty() ? "no run recorded yet in " + history_dir().string()
                                    : "no run on these workers (" + target + ") recorded in " +
                                          history_dir().string());
  std::cout << (o.json ? record_json(*record) : describe_run(*record));
  return 0;
}

}  // namespace tpush::commands
