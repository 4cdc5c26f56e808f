#include <CLI/CLI.hpp>

#include <string>

#include "tpush/commands/plan/persist_run.h"
#include "tpush/commands/plan/targets.h"
#include "tpush/commands/process/process.h"
#include "tpush/commands/run.h"
#include "tpush/util/error.h"

namespace tpush::commands {

int ps_main(Options& o, int signal_fd) {
  bool all_users = false;
  SubcommandSpec spec;
  spec.description =
      "list PID, elapsed time and command of the remote user's processes whose full command line matches "
      "the extended regex PATTERN (pgrep -f), or with no PATTERN all of them except the login plumbing "
      "(sshd, systemd --user); tpush's own shell is never listed.";
  spec.add_own = [&](CLI::App& app) {
    app.add_flag("--all-users", all_users, "Every user's processes, not only the remote user's");
  };
  const auto args = parse_subcommand(o, spec);
  if (!args) return 0;
  if (auto code = hand_to_master(o, signal_fd)) return *code;
  std::optional<std::string> pattern;
  if (args->size() > 1)
    throw UsageError("'tpush ps' takes one PATTERN, got " + std::to_string(args->size()) +
                     " words (quote it: tpush ps '" + args->at(0) + " " + args->at(1) + "')");
  if (!args->empty()) {
    pattern = args->front();
    if (const std::string err = pattern_error(*pattern); !err.empty())
      throw UsageError("'tpush ps': PATTERN '" + *pattern + "' is not an extended regex: " + err);
  }
  Targets t = resolve_targets(o, signal_fd);
  RunPlan plan;
  plan.command = ps_script(pattern, all_users);
  plan.signal_fd = signal_fd;
  plan.refresh = tpu_refresher(o, t, signal_fd);
  return run_on_workers(o, std::move(t.workers), plan);
}

}  // namespace tpush::commands
