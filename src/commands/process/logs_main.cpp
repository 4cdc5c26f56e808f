#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "tpush/commands/plan/persist_run.h"
#include "tpush/commands/plan/targets.h"
#include "tpush/commands/process/process.h"
#include "tpush/commands/run.h"
#include "tpush/util/error.h"

namespace tpush::commands {
namespace {

bool digits(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

}  // namespace

int logs_main(Options& o, int signal_fd) {
  bool follow = false;
  std::string lines = "10";
  SubcommandSpec spec;
  spec.description =
      "show the last LINES (default 10; +N: from line N) of FILE on every worker, prefixed; -f keeps "
      "following it (tail -F) until Ctrl-C. A relative FILE or ~/FILE is in the remote home. Here -f is "
      "--follow and -n is --lines: the fan-out is --fanout, and --no-stdin has no short name.";
  spec.add_own = [&](CLI::App& app) {
    app.add_flag("-f,--follow", follow, "Follow the file as it grows, until Ctrl-C");
    app.add_option("-n,--lines", lines, "Lines to show: N (default 10), or +N from line N")->option_text("LINES");
  };
  const auto args = parse_subcommand(o, spec);
  if (!args) return 0;
  if (auto code = hand_to_master(o, signal_fd)) return *code;
  if (args->size() != 1)
    throw UsageError(std::string("'tpush logs' needs exactly one FILE") +
                     (args->empty() ? "" : ", got " + std::to_string(args->size())) +
                     " (usage: " + usage_of("logs") + ")");
  if (!digits(lines) && !(lines.size() > 1 && lines[0] == '+' && digits(lines.substr(1))))
    throw UsageError("'tpush logs': -n takes a number of lines or +N, not '" + lines + "'");
  Targets t = resolve_targets(o, signal_fd);
  RunPlan plan;
  plan.command = logs_command(args->front(), lines, follow);
  plan.signal_fd = signal_fd;
  plan.refresh = tpu_refresher(o, t, signal_fd);
  return run_on_workers(o, std::move(t.workers), plan);
}

}  // namespace tpush::commands
