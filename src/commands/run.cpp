#include "tpush/commands/run.h"

#include <spdlog/spdlog.h>

#include "tpush/commands/run_context.h"
#include "tpush/fanout/command_job.h"
#include "tpush/util/shell_quote.h"

namespace tpush::commands {

std::string remote_command_line(const std::string& command, const inventory::Worker& worker,
                                std::size_t index, std::size_t count) {
  std::vector<std::pair<std::string, std::string>> env = {
      {"TPUSH_WORKER", std::to_string(index)}, {"TPUSH_NUM_WORKERS", std::to_string(count)}};
  for (const auto& [name, value] : worker.env) {
    bool replaced = false;
    for (auto& e : env)
      if (e.first == name) e.second = value, replaced = true;
    if (!replaced) env.emplace_back(name, value);
  }
  std::string line = "export";
  for (const auto& [name, value] : env) line += " " + name + "=" + util::shell_quote(value);
  return line + "; " + command;
}

namespace {

// Workers that could not be reached at their cached address get one more try
// when a fresh describe shows that address changed.
void retry_moved_workers(RunContext& ctx, fanout::RunOutcome& run, const RunPlan& plan,
                         const RunContext::JobFactory& make_job) {
  std::vector<std::size_t> retry;
  std::vector<inventory::Worker> fresh;
  for (std::size_t i = 0; i < run.results.size(); ++i) {
    const auto& r = run.results[i];
    if (r.reached || (r.outcome != fanout::Outcome::unreachable && r.outcome != fanout::Outcome::timed_out))
      continue;
    if (fresh.empty()) {
      spdlog::info("cached addresses failed to connect; describing the TPU again");
      fresh = plan.refresh();
    }
    const auto& old = ctx.workers()[i];
    for (const auto& f : fresh) {
      if (f.label != old.label || f.target == old.target) continue;
      spdlog::warn("{}: address changed from {} to {}; retrying", f.label, old.target.host, f.target.host);
      ctx.update_worker(i, f);
      retry.push_back(i);
    }
  }
  if (retry.empty()) return;
  const fanout::RunOutcome again = ctx.run(retry, make_job);
  for (std::size_t k = 0; k < retry.size(); ++k) run.results[retry[k]] = again.results[k];
  run.interrupted = again.interrupted;
  run.output_closed = again.output_closed;
}

}  // namespace

int run_on_workers(const Options& o, const std::vector<inventory::Worker>& workers,
                   const RunPlan& plan) {
  RunContext ctx(o, workers, plan.signal_fd);
  auto make_job = [&](std::size_t i) -> std::unique_ptr<fanout::Job> {
    const auto& w = ctx.workers()[i];
    return std::make_unique<fanout::CommandJob>(
        i, ctx.endpoint(i), ctx.settings(), remote_command_line(plan.command, w, i, workers.size()),
        ctx.deadlines(), ctx.lines(), ctx.writer());
  };
  fanout::RunOutcome run = ctx.run(ctx.everyone(), make_job);
  if (plan.refresh && !run.interrupted && !run.output_closed) retry_moved_workers(ctx, run, plan, make_job);
  return ctx.finish(run);
}

}  // namespace tpush::commands
