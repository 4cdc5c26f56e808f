// tpush cp --relay: the files cross the client's link once, and the workers
// pass them on to each other (relay/).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "tpush/commands/copy/copy.h"
#include "tpush/commands/plan/run_context.h"
#include "tpush/commands/plan/targets.h"
#include "tpush/output/progress.h"
#include "tpush/relay/relay_job.h"
#include "tpush/util/environment.h"
#include "tpush/util/error.h"

namespace tpush::commands {

namespace {

// Each worker's TPU slice (its node), when every worker is a TPU's.
std::optional<std::vector<std::size_t>> tpu_slices(const Targets& t) {
  if (!t.tpu || t.tpu->origins.empty() || t.tpu->origins.size() != t.workers.size()) return std::nullopt;
  std::map<std::tuple<std::string, std::string, std::string>, std::size_t> slices;
  std::vector<std::size_t> out;
  for (const inventory::WorkerOrigin& w : t.tpu->origins)
    out.push_back(slices.try_emplace({w.project, w.zone, w.tpu}, slices.size()).first->second);
  return out;
}

}  // namespace

std::string relay_refusal(const Options& o, const Targets& t) {
  const std::size_t n = t.workers.size();
  if (o.fanout && o.fanout < n)
    return "--relay needs every worker at once, and --fanout " + std::to_string(o.fanout) + " is fewer than the " +
           std::to_string(n) + " workers (drop --fanout, or use --no-relay)";
  if (n > default_fanout_limit)
    return "--relay takes at most " + std::to_string(default_fanout_limit) + " workers at once, not " +
           std::to_string(n) + " (copy to parts of the list, or use --no-relay)";
  return {};
}

bool relay_by_default(const Options& o, const Targets& t, std::uint64_t total_bytes) {
  const auto slices = tpu_slices(t);
  if (!slices || total_bytes < kRelayMinBytes || !relay_refusal(o, t).empty()) return false;
  std::map<std::size_t, std::size_t> size;  // a slice of 3 or more workers gains from a chain
  for (std::size_t s : *slices)
    if (++size[s] >= 3) return true;
  return false;
}

int run_relayed_copy(const Options& o, int signal_fd, Targets t,
                     std::shared_ptr<const std::vector<ssh::UploadItem>> items, bool preserve, std::size_t window) {
  if (const std::string why = relay_refusal(o, t); !why.empty()) throw UsageError(why);
  // One chain per TPU slice: a slice's workers share a fast network.
  std::vector<std::size_t> slices = tpu_slices(t).value_or(std::vector<std::size_t>{});
  // The workers of a TPU reach each other at their internal addresses.
  std::vector<std::string> hop_addresses(t.workers.size());
  if (!slices.empty())
    for (std::size_t i = 0; i < hop_addresses.size(); ++i) hop_addresses[i] = t.tpu->origins[i].internal_ip;
  RunContext ctx(o, std::move(t.workers), signal_fd);
  if (ctx.fanout() < ctx.workers().size())
    throw SetupError("--relay needs a connection to every worker at once: " + std::to_string(ctx.workers().size()) +
                     " workers, but the open-file limit allows " + std::to_string(ctx.fanout()) +
                     " (raise it with ulimit -n, or use --no-relay)");
  std::vector<relay::RelayItem> relay_items;
  std::uint64_t total = 0;
  for (const ssh::UploadItem& item : *items) {
    relay::RelayItem r;
    r.entry.directory = !item.bytes;
    r.entry.mode = item.mode;
    r.entry.mtime = item.mtime;
    r.entry.path = item.remote;
    r.bytes = item.bytes;
    if (item.bytes) total += item.bytes->size();
    relay_items.push_back(std::move(r));
  }
  relay::RelayTransfer transfer(std::move(relay_items), ctx.labels(), preserve, std::move(slices));
  output::Progress progress(ctx.labels(), total, output::Progress::stderr_is_terminal());
  ctx.on_events([&] { progress.poll(ctx.writer(), std::chrono::steady_clock::now()); });
  const RunContext::JobFactory make_job = [&](std::size_t i) -> std::unique_ptr<fanout::Job> {
    auto sftp = [items, window](ssh::Session& s) { return std::make_unique<ssh::SftpUpload>(s.session(), items, window); };
    return std::make_unique<relay::RelayJob>(i, ctx.endpoint(i), ctx.settings(), ctx.deadlines(i), transfer,
                                             progress.reporter(i), sftp, hop_addresses[i]);
  };
  auto run = ctx.run(ctx.everyone(), make_job);
  progress.clear(ctx.writer());
  const std::size_t relayed = transfer.relayed();
  if (!o.quiet && !o.json)
    ctx.writer().write(2, "tpush: relay: tpush sent the bytes " + std::to_string(transfer.sends()) +
                              (transfer.sends() == 1 ? " time; " : " times; ") + std::to_string(relayed) + " of " +
                              std::to_string(run.results.size()) + " workers got them from another worker\n");
  return ctx.finish(run);
}

}  // namespace tpush::commands
