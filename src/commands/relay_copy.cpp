// tpush cp --relay: the files cross the client's link once, and the workers
// pass them on to each other (relay/).
#include <spdlog/spdlog.h>

#include "tpush/commands/copy.h"
#include "tpush/commands/run_context.h"
#include "tpush/commands/targets.h"
#include "tpush/output/progress.h"
#include "tpush/relay/relay_job.h"
#include "tpush/util/environment.h"

namespace tpush::commands {

int run_relayed_copy(const Options& o, int signal_fd, const std::vector<ssh::UploadItem>& items, bool preserve) {
  Targets t = resolve_targets(o, signal_fd);
  RunContext ctx(o, std::move(t.workers), signal_fd);
  std::vector<relay::RelayItem> relay_items;
  std::uint64_t total = 0;
  for (const ssh::UploadItem& item : items) {
    relay::RelayItem r;
    r.entry.directory = !item.bytes;
    r.entry.mode = item.mode;
    r.entry.mtime = item.mtime;
    r.entry.path = item.remote;
    r.bytes = item.bytes;
    if (item.bytes) total += item.bytes->size();
    relay_items.push_back(std::move(r));
  }
  // Where the workers' sshd reads keys, when it is not ~/.ssh/authorized_keys.
  const std::string authorized_keys = util::env_value("TPUSH_RELAY_AUTHORIZED_KEYS").value_or("");
  relay::RelayTransfer transfer(std::move(relay_items), ctx.labels(), preserve, authorized_keys);
  output::Progress progress(ctx.labels(), total, output::Progress::stderr_is_terminal());
  ctx.on_events([&] { progress.poll(ctx.writer(), std::chrono::steady_clock::now()); });
  const RunContext::JobFactory make_job = [&](std::size_t i) -> std::unique_ptr<fanout::Job> {
    auto report = [&progress, i](std::uint64_t bytes, bool done) {
      auto& w = progress.worker(i);
      w.started = true;
      w.bytes = bytes;
      w.done = w.done || done;
    };
    return std::make_unique<relay::RelayJob>(i, ctx.endpoint(i), ctx.settings(), ctx.deadlines(i), transfer, report);
  };
  auto run = ctx.run(ctx.everyone(), make_job);
  progress.clear(ctx.writer());
  std::size_t relayed = 0;
  for (const auto& r : run.results)
    if (r.outcome == fanout::Outcome::ok && r.reason.rfind("ok (from tpush", 0) != 0) ++relayed;
  if (!o.quiet && !o.json)
    ctx.writer().write(2, "tpush: relay: tpush sent the bytes " + std::to_string(transfer.sends()) +
                              (transfer.sends() == 1 ? " time; " : " times; ") + std::to_string(relayed) + " of " +
                              std::to_string(run.results.size()) + " workers got them from another worker\n");
  return ctx.finish(run);
}

}  // namespace tpush::commands
