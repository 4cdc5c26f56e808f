// From argv to an exit code: parse, resolve workers, run the subcommand.
#pragma once

#include "tpush/fanout/run_host.h"

namespace tpush::commands {

// Throws UsageError / SetupError for problems that stop the whole run; main
// turns them into "tpush: error: ..." and exit codes 2 / 255.
// `host` is set when a persist master runs it (persist/master.h).
int dispatch(int argc, const char* const* argv, const fanout::RunHost* host = nullptr);

// dispatch, with every error turned into its message on stderr and its exit
// code (main's whole job; a persist master calls it for each run it serves).
int run_command_line(int argc, const char* const* argv, const fanout::RunHost* host = nullptr);

}  // namespace tpush::commands
