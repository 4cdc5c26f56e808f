// From argv to an exit code: parse, resolve workers, run the subcommand.
#pragma once

namespace tpush::commands {

// Throws UsageError / SetupError for problems that stop the whole run; main
// turns them into "tpush: error: ..." and exit codes 2 / 255.
int dispatch(int argc, const char* const* argv);

}  // namespace tpush::commands
