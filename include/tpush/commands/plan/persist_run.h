// Runs through a persist master (persist/client.h) when --persist asks for
// one, and `tpush disconnect`, which ends it.
#pragma once

#include <optional>
#include <string>

#include "tpush/commands/cli/options.h"

namespace tpush::commands {

// What names the workers of a run, for finding its master: the worker options
// as given (not --worker: a subset of a pod shares the pod's master).
std::string worker_set_of(const Options& o);

// The exit code of the run as a master ran it; nullopt when it is to run here
// (no --persist, already in a master, or no master could take it). Called
// by each command that runs on workers once its arguments are parsed (the
// worker options may follow a subcommand's name).
std::optional<int> hand_to_master(const Options& o, int signal_fd);

// `tpush disconnect`: ends the master of these workers and lists what it held.
int disconnect_main(Options& o, int signal_fd);

}  // namespace tpush::commands
