#include "tpush/commands/targets.h"

#include <spdlog/spdlog.h>

#include "tpush/inventory/inventory.h"
#include "tpush/util/error.h"

namespace tpush::commands {
namespace {

inventory::TpuQuery tpu_query(const Options& o, int signal_fd) {
  inventory::TpuQuery q;
  q.interrupt_fd = signal_fd;
  q.tpus = o.tpus;
  q.queued_resources = o.queued_resources;
  q.zone = o.zone;
  q.project = o.project;
  q.worker_selection = o.worker_selection;
  q.internal_ip = o.internal_ip;
  q.refresh = o.refresh;
  q.fetch_host_keys = o.fetch_host_keys;
  q.tunnel_through_iap = o.tunnel_through_iap;
  q.gcloud_timeout = std::chrono::seconds(o.gcloud_timeout);
  return q;
}

}  // namespace

Targets resolve_targets(const Options& o, int signal_fd) {
  Targets t;
  t.workers = inventory::workers_from_host_lists(o.host_exprs, o.host_files, o.excludes);
  inventory::apply_labels(t.workers, o.label == "index" ? inventory::LabelMode::index
                                                        : inventory::LabelMode::host);
  if (!o.tpus.empty() || !o.queued_resources.empty()) {
    t.tpu = inventory::resolve_tpus(tpu_query(o, signal_fd));
    for (const auto& w : t.tpu->warnings) spdlog::warn("{}", w);
    spdlog::debug("workers from {}", t.tpu->source);
    if (t.workers.empty()) {
      t.workers = std::move(t.tpu->workers);
    } else {  // mixed sources: the TPU's origins no longer line up with the list
      t.workers.insert(t.workers.end(), t.tpu->workers.begin(), t.tpu->workers.end());
      t.tpu.reset();
    }
  }
  if (t.workers.empty())
    throw UsageError("no workers: give hosts with -w EXPR or -H FILE, or a TPU with -t NAME");
  return t;
}

std::function<std::vector<inventory::Worker>()> tpu_refresher(const Options& o, const Targets& t,
                                                              int signal_fd) {
  if (!t.tpu || !t.tpu->from_cache) return {};
  return [q = tpu_query(o, signal_fd)]() mutable {
    q.refresh = true;
    return inventory::resolve_tpus(q).workers;
  };
}

}  // namespace tpush::commands
