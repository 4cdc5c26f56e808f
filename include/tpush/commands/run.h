// `tpush [options] COMMAND`: run one command on every worker.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tpush/commands/options.h"
#include "tpush/inventory/worker.h"

namespace tpush::commands {

// The command line each worker's shell receives: the TPUSH_* variables (and the
// worker's own extras) exported, then the user's command.
std::string remote_command_line(const std::string& command, const inventory::Worker& worker,
                                std::size_t index, std::size_t count);

struct RunPlan {
  std::string command;
  int signal_fd = -1;
  // When set: resolves the workers again (fresh TPU describe). Workers that
  // could not be reached and whose address changed are then tried once more.
  std::function<std::vector<inventory::Worker>()> refresh;
};

// Runs the plan's command on `workers`, prints the summary; returns tpush's exit code.
int run_on_workers(const Options& options, const std::vector<inventory::Worker>& workers,
                   const RunPlan& plan);

}  // namespace tpush::commands
