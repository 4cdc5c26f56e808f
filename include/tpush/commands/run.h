// `tpush [options] COMMAND`: run one command on every worker.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tpush/commands/cli/options.h"
#include "tpush/fanout/result.h"
#include "tpush/inventory/worker.h"

namespace tpush::commands {

using EnvList = std::vector<std::pair<std::string, std::string>>;

// -e NAME / NAME=VALUE as name-value pairs (NAME's value taken from tpush's
// own environment). UsageError for a bad name or an unset NAME.
EnvList resolve_env(const std::vector<std::string>& specs);

struct RemoteSetup {
  EnvList env;     // -e
  std::string cd;  // --cd
};

// The command line each worker's shell receives: the TPUSH_* variables, the
// worker's own extras and -e variables exported, --cd, then the user's
// command. With `mask`, -e values read ******** (for logs).
std::string remote_command_line(const std::string& command, const inventory::Worker& worker,
                                std::size_t index, std::size_t count,
                                const RemoteSetup& setup = {}, bool mask = false);

// `line` (a remote command line) run as root by sudo, which asks with
// `prompt`; the root shell prints `mark` on stderr first (sudo_command.sh).
std::string with_sudo(const std::string& line, const std::string& prompt, const std::string& mark);

struct RunPlan {
  std::string command;
  RemoteSetup setup;
  bool tty = false;    // a pty per worker
  bool forward_stdin = false;  // stream tpush's stdin to every worker
  int signal_fd = -1;
  // When set: resolves the workers again (fresh TPU describe). Workers that
  // could not be reached and whose address changed are then tried once more.
  std::function<std::vector<inventory::Worker>()> refresh;
  // When set: receives every worker's result, in the order of `workers`.
  std::vector<fanout::WorkerResult>* results = nullptr;
};

// Runs the plan's command on `workers`, prints the summary; returns tpush's exit code.
// Takes the list (the caller moves it in): at 1,000 workers a copy is 0.2 MB.
int run_on_workers(const Options& options, std::vector<inventory::Worker> workers, const RunPlan& plan);

}  // namespace tpush::commands
