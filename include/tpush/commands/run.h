// `tpush [options] COMMAND`: run one command on every worker.
#pragma once

#include <string>
#include <vector>

#include "tpush/commands/options.h"
#include "tpush/inventory/worker.h"

namespace tpush::commands {

// The command line each worker's shell receives: the TPUSH_* variables (and the
// worker's own extras) exported, then the user's command.
std::string remote_command_line(const std::string& command, const inventory::Worker& worker,
                                std::size_t index, std::size_t count);

// Runs `command` on `workers`; returns tpush's exit code.
int run_on_workers(const Options& options, const std::vector<inventory::Worker>& workers,
                   const std::string& command, int signal_fd);

}  // namespace tpush::commands
