// The part of `tpush cp` and `tpush get` after their arguments are checked.
#include <CLI/CLI.hpp>

#include "tpush/commands/copy/copy.h"
#include "tpush/commands/plan/run_context.h"
#include "tpush/commands/plan/targets.h"
#include "tpush/fanout/copy_job.h"
#include "tpush/output/progress.h"

namespace tpush::commands {

void add_copy_flags(CLI::App& app, bool& recursive, bool& preserve) {
  app.add_flag("-r,--recursive", recursive, "Copy directories and everything in them");
  app.add_flag("-p,--preserve", preserve, "Keep each file's mode and modification time (the port is --port)");
}

int run_transfers(const Options& o, int signal_fd, std::uint64_t total_bytes, const TransferFor& transfer_for) {
  return run_transfers(o, signal_fd, resolve_targets(o, signal_fd), total_bytes, transfer_for);
}

int run_transfers(const Options& o, int signal_fd, Targets t, std::uint64_t total_bytes,
                  const TransferFor& transfer_for) {
  RunContext ctx(o, std::move(t.workers), signal_fd);
  output::Progress progress(ctx.labels(), total_bytes, output::Progress::stderr_is_terminal());
  ctx.on_events([&] { progress.poll(ctx.writer(), std::chrono::steady_clock::now()); });
  const RunContext::JobFactory make_job = [&](std::size_t i) -> std::unique_ptr<fanout::Job> {
    return std::make_unique<fanout::CopyJob>(i, ctx.endpoint(i), ctx.settings(), ctx.deadlines(i),
                                             transfer_for(ctx, i), progress.reporter(i));
  };
  auto run = ctx.run(ctx.everyone(), make_job);
  ctx.retry_moved(run, tpu_refresher(o, t, signal_fd), make_job);
  progress.clear(ctx.writer());
  return ctx.finish(run);
}

}  // namespace tpush::commands
