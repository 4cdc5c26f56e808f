#include "tpush/commands/plan/targets.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "tpush/commands/cli/config_file.h"
#include "tpush/commands/plan/run_history.h"
#include "tpush/inventory/inventory.h"
#include "tpush/inventory/node_set.h"
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

// --failed: keeps the workers the target's record lists as not ok.
void keep_failed(const Options& o, Targets& t) {
  const std::string target = target_of(o);
  const auto record = target_record(target);
  if (!record)
    throw UsageError("--failed: no earlier run on these workers (" + target + ") is recorded in " +
                     history_dir().string() + "; run once without --failed");
  const std::vector<std::string> failed = not_ok_labels(*record);
  if (failed.empty())
    throw NothingToDo("--failed: every worker succeeded in the last run on these workers (" + record->time +
                      "): nothing to run");
  std::vector<inventory::Worker> kept;
  std::vector<inventory::WorkerOrigin> origins;
  for (std::size_t i = 0; i < t.workers.size(); ++i) {
    if (std::find(failed.begin(), failed.end(), t.workers[i].label) == failed.end()) continue;
    kept.push_back(std::move(t.workers[i]));
    if (t.tpu && i < t.tpu->origins.size()) origins.push_back(t.tpu->origins[i]);
  }
  if (kept.empty())
    throw UsageError("--failed: the workers that did not succeed last time (" + inventory::fold_node_set(failed) +
                     ") are not among these workers now; run without --failed");
  spdlog::info("--failed: {} of {} workers: {}", kept.size(), t.workers.size(), inventory::fold_node_set(failed));
  t.workers = std::move(kept);
  if (t.tpu) t.tpu->origins = std::move(origins);
}

// Takes the `tpu:NAME` members of groups and host lists out of `workers`, as
// TPU names to resolve with the -t ones.
std::vector<std::string> take_tpu_members(std::vector<inventory::Worker>& workers) {
  std::vector<std::string> names;
  std::erase_if(workers, [&](const inventory::Worker& w) {
    std::string name = inventory::tpu_member(w.target);
    if (name.empty()) return false;
    names.push_back(std::move(name));
    return true;
  });
  return names;
}

}  // namespace

Targets resolve_targets(const Options& o, int signal_fd) {
  Targets t;
  const std::optional<inventory::HostGroups> groups = load_groups(o);
  inventory::HostListOptions list_options;
  if (groups) list_options.groups = &*groups;
  else list_options.no_groups_hint = "write 'NAME: HOSTS' lines in " + groups_file().string();
  t.workers = inventory::workers_from_host_lists(o.host_exprs, o.host_files, o.excludes, list_options);
  std::vector<std::string> tpus = o.tpus;
  for (auto& name : take_tpu_members(t.workers)) tpus.push_back(std::move(name));
  inventory::apply_labels(t.workers, o.label == "index" ? inventory::LabelMode::index
                                                        : inventory::LabelMode::host);
  if (!tpus.empty() || !o.queued_resources.empty()) {
    inventory::TpuQuery query = tpu_query(o, signal_fd);
    query.tpus = t.tpu_names = std::move(tpus);
    t.tpu = inventory::resolve_tpus(query);
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
  if (o.failed) keep_failed(o, t);
  return t;
}

std::function<std::vector<inventory::Worker>()> tpu_refresher(const Options& o, const Targets& t,
                                                              int signal_fd) {
  if (!t.tpu || !t.tpu->from_cache) return {};
  return [q = tpu_query(o, signal_fd), names = t.tpu_names]() mutable {
    q.tpus = names;
    q.refresh = true;
    return inventory::resolve_tpus(q).workers;
  };
}

}  // namespace tpush::commands
