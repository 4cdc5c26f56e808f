#include "tpush/commands/shell.h"

#include <unistd.h>

#include <cstdio>

#include "tpush/commands/cli/subcommands.h"
#include "tpush/commands/plan/persist_run.h"
#include "tpush/commands/plan/run_context.h"
#include "tpush/commands/plan/targets.h"
#include "tpush/fanout/input_feed.h"
#include "tpush/fanout/shell_job.h"
#include "tpush/inventory/node_set.h"
#include "tpush/output/exit_codes.h"
#include "tpush/output/raw_output.h"
#include "tpush/util/error.h"
#include "tpush/util/terminal.h"

namespace tpush::commands {
namespace {

// What tpush exits with: the shell's own status, as ssh does; 255 when there
// was none (the worker unreachable, the connection lost, the shell killed).
int exit_code_of(const fanout::WorkerResult& r) {
  if (r.outcome == fanout::Outcome::interrupted) return output::exit_code::interrupted;
  if (r.exit_status >= 0 && r.signal.empty()) return r.exit_status;
  return output::exit_code::unreachable;
}

}  // namespace

std::size_t pick_worker(const std::vector<inventory::Worker>& workers, const std::optional<std::string>& label,
                        const std::string& asked) {
  if (!label) return 0;
  for (std::size_t i = 0; i < workers.size(); ++i)
    if (workers[i].label == *label) return i;
  std::optional<std::size_t> by_host;
  for (std::size_t i = 0; i < workers.size(); ++i) {
    if (workers[i].target.host != *label) continue;
    if (by_host)
      throw UsageError(asked + ": several workers are on that host (" + workers[*by_host].label +
                       ", " + workers[i].label + "); name one by its label");
    by_host = i;
  }
  if (by_host) return *by_host;
  std::vector<std::string> labels;
  for (const auto& w : workers) labels.push_back(w.label);
  throw UsageError(asked + ": no such worker (the workers: " +
                   inventory::fold_node_set(labels) + "); name one of them (without one: the first)");
}

int shell_main(Options& o, int signal_fd) {
  SubcommandSpec spec;
  spec.without_sudo = "the shell is the login user's (run sudo -i in it)";
  spec.description =
      "open an interactive login shell on one worker: the first, or the one LABEL names (w3, s1w0, a host), "
      "reached as a run reaches it, on a pseudo-terminal the size of this one. It ends with the shell, and "
      "tpush exits with the shell's status (255 when the worker could not be reached).";
  const auto args = parse_subcommand(o, spec);
  if (!args) return output::exit_code::ok;
  if (args->size() > 1)
    throw UsageError("'tpush shell' takes at most one LABEL, got " + std::to_string(args->size()) +
                     " (usage: " + usage_of("shell") + "; to run a command on every worker: tpush -w HOSTS 'CMD')");
  if (::isatty(STDIN_FILENO) != 1)
    throw UsageError("tpush shell: stdin is not a terminal, and the shell is interactive (run it from a terminal; "
                     "to run commands, give them: tpush -w HOSTS 'CMD')");
  // A persist master's kept session opens the shell at once (the master works the client's terminal).
  if (auto code = hand_to_master(o, signal_fd)) return *code;
  Targets t = resolve_targets(o, signal_fd);
  const std::optional<std::string> label = args->empty() ? std::nullopt : std::optional(args->front());
  const std::size_t chosen = pick_worker(t.workers, label, "tpush shell " + label.value_or(""));
  RunContext ctx(o, {std::move(t.workers[chosen])}, signal_fd);
  output::RawOutput raw(ctx.writer());
  ctx.on_events([] {});  // no status line over the shell's screen
  fanout::InputFeed keys(STDIN_FILENO);
  auto make_job = [&](std::size_t i) -> std::unique_ptr<fanout::Job> {
    return std::make_unique<fanout::ShellJob>(i, ctx.endpoint(i), ctx.settings(), ctx.deadlines(i), keys,
                                              STDIN_FILENO, raw);
  };
  fanout::RunOutcome run;
  {
    const util::RawTerminal terminal(STDIN_FILENO);
    run = ctx.run(ctx.everyone(), make_job, &keys);
    ctx.writer().drain_and_stop();
  }
  const fanout::WorkerResult& r = run.results.front();
  if (r.exit_status < 0 || !r.signal.empty())
    std::fprintf(stderr, "tpush: %s: %s\n", ctx.labels().front().c_str(), r.reason.c_str());
  return exit_code_of(r);
}

}  // namespace tpush::commands
