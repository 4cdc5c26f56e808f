#include "tpush/inventory/tpu_workers.h"

#include <filesystem>

#include <spdlog/spdlog.h>

#include "tpush/inventory/gcloud.h"
#include "tpush/inventory/tpu_access.h"
#include "tpush/inventory/tpu_host_keys.h"
#include "tpush/util/error.h"
#include "tpush/util/file.h"

namespace tpush::inventory {
namespace {

namespace fs = std::filesystem;

// The OS Login user name: `gcloud compute os-login describe-profile`, kept in
// the cache beside the TPUs (asked again with --refresh).
std::string os_login_user(const TpuQuery& q, const TpuCache& cache) {
  const fs::path file = cache.dir() / "os-login" / "profile.json";
  if (!q.refresh)
    if (auto text = util::read_file(file)) try {
        return os_login_username(*text);
      } catch (const SetupError&) {
      }
  GcloudResult r = run_gcloud({"compute", "os-login", "describe-profile", "--format=json"}, q.gcloud_timeout,
                              q.interrupt_fd);
  if (!r.ok()) throw_gcloud_failure(r, GcloudSubject{"OS Login profile", "of the active account", "", {}, ""});
  std::string name = os_login_username(r.out);
  if (const std::string err = util::write_file_atomic(file, r.out); !err.empty())
    spdlog::debug("cannot write {}: {}", file.string(), err);
  return name;
}

}  // namespace

TpuWorkerMaker::TpuWorkerMaker(const TpuQuery& q, const TpuCache& cache, const WorkerSelection& selection,
                               bool prefix_names)
    : q_(q), cache_(cache), selection_(selection), prefix_names_(prefix_names) {}

void TpuWorkerMaker::add_node(const TpuTarget& t, const ResolvedNode& job, TpuResolution& res) {
  const TpuNode& node = job.node;
  const int n = static_cast<int>(node.workers.size());
  const std::string shown = t.is_qr ? t.name + " slice " + std::to_string(job.slice) + " (" +
                                          node.ref.name + ")"
                                    : node.ref.name;
  for (int w : selection_.resolve(n, shown)) {
    const TpuEndpoint& ep = node.workers[static_cast<std::size_t>(w)];
    res.workers.push_back(worker(t, job, w, ep, shown));
    res.origins.push_back(origin(job, w, ep));
  }
}

void TpuWorkerMaker::warn_no_external(std::vector<std::string>& warnings) const {
  for (const auto& tpu : no_external_)
    warnings.push_back("TPU " + tpu + " has no external IP: connecting to its internal addresses; from outside "
                       "its VPC use --tunnel-through-iap, or --internal-ip to say that is what you want");
}

Worker TpuWorkerMaker::worker(const TpuTarget& t, const ResolvedNode& job, int w, const TpuEndpoint& ep,
                              const std::string& shown) {
  const TpuNode& node = job.node;
  Worker worker;
  const bool external = !q_.internal_ip && !q_.tunnel_through_iap && !ep.external_ip.empty();
  worker.target.host = external ? ep.external_ip : ep.internal_ip;
  worker.target.text = worker.target.host;
  if (!external && !q_.internal_ip && !q_.tunnel_through_iap) no_external_.insert(shown);
  if (q_.tunnel_through_iap) {
    auto name = job.hostnames.find(w);
    if (name == job.hostnames.end())
      throw SetupError("no instance name for worker " + std::to_string(w) + " of TPU " + node.ref.text() +
                       " in its guest attributes (the `hostname` key), which --tunnel-through-iap needs: is "
                       "the worker up? retry with --refresh");
    worker.iap = std::make_shared<const IapWorker>(
        IapWorker{name->second, node.ref.zone, node.ref.project, node.ref.text()});
  }
  if (job.oslogin) {
    if (!login_) login_ = os_login_user(q_, cache_);
    worker.target.user = *login_;
    worker.user_from = "OS Login profile";
  }
  worker.key_hint = key_propagation_hint(node.ref.name, node.ref.zone, node.ref.project, job.oslogin);
  std::string label = "w" + std::to_string(w);
  if (t.is_qr) label = "s" + std::to_string(job.slice) + label;
  if (prefix_names_) label = t.name + "/" + label;
  worker.label = label;

  std::optional<std::string> key;
  if (job.host_keys) {
    if (auto it = job.host_keys->find(w); it != job.host_keys->end()) key = it->second;
  }
  if (q_.fetch_host_keys) {
    if (!key) {
      throw SetupError("no ssh-ed25519 host key for worker " + std::to_string(w) + " of TPU " +
                       node.ref.text() + " in its guest attributes (is the worker up? drop "
                       "--fetch-host-keys to verify against known_hosts instead)");
    }
    worker.pinned_host_key = "ssh-ed25519 " + *key;
  }
  worker.host_key_aliases = tpu_host_key_aliases(node.id, w, key);
  const int n = static_cast<int>(node.workers.size());
  worker.env.emplace_back("TPUSH_WORKER", std::to_string(w));
  worker.env.emplace_back("TPUSH_NUM_WORKERS", std::to_string(n));
  if (t.is_qr) {
    worker.env.emplace_back("TPUSH_SLICE", std::to_string(job.slice));
    worker.env.emplace_back("TPUSH_NUM_SLICES", std::to_string(t.jobs.size()));
  }
  return worker;
}

WorkerOrigin TpuWorkerMaker::origin(const ResolvedNode& job, int w, const TpuEndpoint& ep) {
  const TpuNode& node = job.node;
  WorkerOrigin o;
  o.tpu = node.ref.name;
  o.project = node.ref.project;
  o.zone = node.ref.zone;
  o.queued_resource = job.queued_resource;
  o.node_id = node.id;
  o.worker = w;
  o.num_workers = static_cast<int>(node.workers.size());
  o.slice = job.slice;
  o.internal_ip = ep.internal_ip;
  o.external_ip = ep.external_ip;
  if (auto name = job.hostnames.find(w); name != job.hostnames.end()) o.instance = name->second;
  o.oslogin = job.oslogin;
  o.from_cache = job.from_cache;
  o.fetched_at = job.fetched_at;
  return o;
}

}  // namespace tpush::inventory
