#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "tpush/commands/process.h"
#include "tpush/commands/run.h"
#include "tpush/commands/targets.h"
#include "tpush/util/error.h"

namespace tpush::commands {
namespace {

bool digits(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

// The global options own -f (--fanout) and -n (--no-stdin); for logs they mean
// --follow and --lines, so they are rewritten before parsing (up to `--`):
// -f, -n N, -nN, -fn N.
void rewrite_short_options(std::vector<std::string>& args) {
  std::vector<std::string> out;
  bool done = false;
  for (const auto& a : args) {
    if (done || a == "--") {
      done = true;
      out.push_back(a);
    } else if (a == "-f") {
      out.emplace_back("--follow");
    } else if (a == "-n") {
      out.emplace_back("--lines");
    } else if (a == "-fn" || a == "-nf") {
      out.emplace_back("--follow");
      out.emplace_back("--lines");
    } else if (a.rfind("-n", 0) == 0 && (digits(a.substr(2)) || (a.size() > 3 && a[2] == '+' && digits(a.substr(3))))) {
      out.push_back("--lines=" + a.substr(2));
    } else {
      out.push_back(a);
    }
  }
  args = std::move(out);
}

}  // namespace

int logs_main(Options& o, int signal_fd) {
  bool follow = false;
  std::string lines = "10";
  SubcommandSpec spec;
  spec.usage = "logs [-f] [-n LINES] FILE";
  spec.description =
      "Show the last LINES (default 10; +N: from line N) of FILE on every worker, prefixed;\n"
      "-f/--follow keeps following it (tail -F) until Ctrl-C. A relative FILE or ~/FILE is in the\n"
      "remote home. Here -f is --follow and -n is --lines (use --fanout for the fan-out).";
  spec.add_own = [&](CLI::App& app) {
    app.add_flag("--follow", follow, "(-f) Follow the file as it grows, until Ctrl-C")->group("logs");
    app.add_option("--lines", lines, "(-n) Lines to show: N (default 10), or +N from line N")->group("logs");
  };
  rewrite_short_options(o.rest);
  const auto args = parse_subcommand(o, spec);
  if (!args) return 0;
  if (args->size() != 1)
    throw UsageError(std::string("'tpush logs' needs exactly one FILE") +
                     (args->empty() ? "" : ", got " + std::to_string(args->size())) +
                     " (usage: tpush [OPTIONS] " + spec.usage + ")");
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
