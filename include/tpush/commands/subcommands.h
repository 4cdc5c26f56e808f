// Every subcommand's entry point: parses o.rest (parse_subcommand), resolves
// the targets, runs, and returns tpush's exit code.
#pragma once

#include "tpush/commands/options.h"

namespace tpush::commands {

int workers_main(Options& o, int signal_fd);

}  // namespace tpush::commands
