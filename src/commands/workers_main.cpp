#include <CLI/CLI.hpp>

#include <spdlog/spdlog.h>

#include <iostream>

#include "tpush/commands/cli/subcommands.h"
#include "tpush/commands/plan/targets.h"
#include "tpush/commands/plan/workers.h"
#include "tpush/util/environment.h"

namespace tpush::commands {

int workers_main(Options& o, int signal_fd) {
  SubcommandSpec spec;
  spec.description = "list the workers tpush resolved, and where each came from.";
  spec.takes_args = false;
  if (!parse_subcommand(o, spec)) return 0;
  const Targets t = resolve_targets(o, signal_fd);
  const ReachPlanner planner(o, util::home_dir(), util::user_name());
  const auto plan = [&](std::size_t i, ReachScratch& s) { planner.plan(t.workers[i], s); };
  const int rc = print_workers(t.workers, plan, t.tpu ? &*t.tpu : nullptr, o.json, o.verbose > 0, std::cout);
  if (!o.json)
    for (const auto& warning : planner.warnings()) spdlog::warn("{}", warning);
  return rc;
}

}  // namespace tpush::commands
