// resolve_tpus: TPU names and queued resources -> nodes, through the cache or
// gcloud: zone and project lookup, each node described (in parallel), state
// checks; the workers of those nodes are made by tpu_workers.
#include "tpush/inventory/tpu_resolve.h"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <set>
#include <utility>

#include <spdlog/spdlog.h>

#include "tpush/inventory/gcloud.h"
#include "tpush/inventory/tpu_access.h"
#include "tpush/inventory/tpu_cache.h"
#include "tpush/inventory/tpu_describe.h"
#include "tpush/inventory/tpu_host_keys.h"
#include "tpush/inventory/tpu_project.h"
#include "tpush/inventory/tpu_queued_resource.h"
#include "tpush/inventory/tpu_workers.h"
#include "tpush/inventory/worker_selection.h"
#include "tpush/util/environment.h"
#include "tpush/util/error.h"
#include "tpush/util/file.h"
#include "tpush/util/string.h"

namespace tpush::inventory {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kParallelGcloud = 8;  // gcloud calls in flight at once

std::string env_or_empty(const char* name) { return util::env_value(name).value_or(""); }

std::vector<std::string> split_list(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& item : items) {
    std::size_t start = 0;
    while (start <= item.size()) {
      auto comma = item.find(',', start);
      std::string part = util::trimmed(item.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
      if (!part.empty() && seen.insert(part).second) out.push_back(part);
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  return out;
}

void validate(const std::string& what, const std::string& value, const std::regex& re) {
  if (!std::regex_match(value, re)) {
    const std::string shown = value.size() <= 80 ? value : value.substr(0, 60) + "... (" + std::to_string(value.size()) + " characters)";
    throw UsageError("invalid " + what + " '" + shown + "' (letters, digits and - only; it must not "
                     "start with -)");
  }
}

const std::regex& name_re() {
  static const std::regex re("[A-Za-z0-9][A-Za-z0-9_.-]{0,127}");
  return re;
}
const std::regex& zone_re() {
  static const std::regex re("[a-z0-9][a-z0-9-]{0,62}");
  return re;
}
const std::regex& project_re() {
  static const std::regex re("[A-Za-z0-9][A-Za-z0-9.:_-]{0,127}");
  return re;
}

// ---- gcloud configuration: flags, environment, config file, `gcloud config` --

// A property from gcloud's active configuration file, read directly (running
// gcloud takes a second or more). Outer nullopt: the file could not be read.
std::optional<std::optional<std::string>> config_file_value(const std::string& section,
                                                            const std::string& key) {
  fs::path dir = env_or_empty("CLOUDSDK_CONFIG");
  if (dir.empty()) {
    std::string home = env_or_empty("HOME");
    if (home.empty()) return std::nullopt;
    dir = fs::path(home) / ".config" / "gcloud";
  }
  std::string active = env_or_empty("CLOUDSDK_ACTIVE_CONFIG_NAME");
  if (active.empty()) {
    std::ifstream a(dir / "active_config");
    if (a) std::getline(a, active);
    active = util::trimmed(active);
    if (active.empty()) active = "default";
  }
  std::ifstream in(dir / "configurations" / ("config_" + active));
  if (!in) return std::nullopt;
  std::string line, current;
  while (std::getline(in, line)) {
    line = util::trimmed(line);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[' && line.back() == ']') {
      current = util::trimmed(line.substr(1, line.size() - 2));
      continue;
    }
    auto eq = line.find('=');
    if (eq == std::string::npos || current != section) continue;
    if (util::trimmed(line.substr(0, eq)) == key) {
      std::string value = util::trimmed(line.substr(eq + 1));
      if (value.empty()) return std::optional<std::string>();
      return std::optional<std::string>(value);
    }
  }
  return std::optional<std::string>();
}

struct Setting {
  std::vector<std::string> values;
  std::string origin;
};

std::optional<Setting> from_gcloud_config(const std::string& section, const std::string& key,
                                          std::chrono::seconds timeout, int interrupt_fd) {
  const std::string property = section + "/" + key;
  std::optional<std::string> value;
  if (auto file = config_file_value(section, key)) {
    value = *file;
  } else {
    value = gcloud_config_value(property, timeout, interrupt_fd);
  }
  if (!value) return std::nullopt;
  return Setting{{*value}, "gcloud config " + property};
}

Setting resolve_project(const TpuQuery& q) {
  if (!q.project.empty()) return {{q.project}, "--project"};
  if (auto v = env_or_empty("CLOUDSDK_CORE_PROJECT"); !v.empty()) return {{v}, "CLOUDSDK_CORE_PROJECT"};
  if (auto s = from_gcloud_config("core", "project", q.gcloud_timeout, q.interrupt_fd)) return *s;
  throw UsageError("no project for the TPU: pass --project PROJECT, set CLOUDSDK_CORE_PROJECT, or "
                   "run gcloud config set project PROJECT");
}

Setting resolve_zones(const TpuQuery& q) {
  if (!q.zone.empty()) return {split_list({q.zone}), "--zone"};
  for (const char* var : {"TPUSH_ZONE", "CLOUDSDK_COMPUTE_ZONE"}) {
    if (auto v = env_or_empty(var); !v.empty()) return {split_list({v}), var};
  }
  if (auto s = from_gcloud_config("compute", "zone", q.gcloud_timeout, q.interrupt_fd)) return *s;
  throw UsageError("no zone for the TPU: pass --zone ZONE, set TPUSH_ZONE, or run gcloud config "
                   "set compute/zone ZONE");
}

// "projects/P/locations/Z/nodes/N" (or .../queuedResources/N) -> ref. Split by
// hand: std::regex recursed once per character, so a long argument overflowed
// the stack.
std::optional<TpuNodeRef> parse_full_name(const std::string& text) {
  const std::vector<std::string> part = util::split(text, '/');
  if (part.size() != 6 || part[0] != "projects" || part[2] != "locations" ||
      (part[4] != "nodes" && part[4] != "queuedResources"))
    return std::nullopt;
  if (part[1].empty() || part[3].empty() || part[5].empty()) return std::nullopt;
  return TpuNodeRef{part[1], part[3], part[5]};
}

// ---- one node: cache or gcloud --------------------------------------------

// One node to resolve: its candidate refs in, what the cache or gcloud said out
// (ResolvedNode, what the worker maker reads).
struct NodeJob : ResolvedNode {
  std::vector<TpuNodeRef> candidates;  // the same name in each zone to try, in order
  std::string zone_origin;
  std::vector<std::string> warnings;
  std::exception_ptr error;
};

std::vector<std::string> gcloud_args(const char* verb_group, const char* verb, const TpuNodeRef& ref) {
  return {"compute", "tpus", verb_group, verb, ref.name, "--zone", ref.zone, "--project", ref.project,
          "--format=json"};
}

// What a node needs besides its describe output: guest attributes (pinned
// host keys, the instance names IAP tunnels need) and the project's OS Login
// setting. The cache entry keeps them (and a project that refused to say);
// what it lacks comes from gcloud and is stored.
void complete_node(NodeJob& job, const TpuQuery& q, const TpuCache& cache, TpuCacheEntry& entry,
                   ProjectInfoCalls& projects) {
  const TpuNodeRef& ref = job.node.ref;
  bool changed = false;
  if ((q.fetch_host_keys || q.tunnel_through_iap) && !entry.guest_attributes_json) {
    GcloudResult r = run_gcloud(gcloud_args("tpu-vm", "get-guest-attributes", ref), q.gcloud_timeout, q.interrupt_fd);
    if (!r.ok()) throw_gcloud_failure(r, GcloudSubject{"TPU", ref.name, ref.project, {ref.zone}, ""});
    entry.guest_attributes_json = r.out;
    changed = true;
  }
  if (entry.guest_attributes_json) {
    try {
      job.host_keys = parse_ed25519_host_keys(*entry.guest_attributes_json, "TPU " + ref.text());
      job.hostnames = parse_worker_hostnames(*entry.guest_attributes_json, "TPU " + ref.text());
    } catch (const SetupError&) {
      if (!job.from_cache) throw;
      job.host_keys.reset();  // a cached copy that does not parse: as if absent
    }
  }
  // OS Login: the TPU's own metadata decides; without it, the project's.
  if (auto own = tpu_metadata_oslogin(entry.describe_json)) {
    job.oslogin = *own;
  } else {
    std::string unread;  // why the project's metadata is not known
    if (entry.project_info_error) {
      unread = *entry.project_info_error + "; remembered from " + entry.fetched_at + ", --refresh asks again";
    } else if (!entry.project_info_json) {
      ProjectInfoAnswer answer = projects.get(ref.project);
      if (answer.json) entry.project_info_json = std::move(answer.json);
      else if (!answer.refused.empty()) entry.project_info_error = unread = answer.refused;
      else unread = answer.failed;
      changed = answer.failed.empty();
    }
    if (!unread.empty())
      spdlog::debug("project {}: metadata not readable ({}); OS Login counts as off unless the TPU says", ref.project,
                    unread);
    if (entry.project_info_json) job.oslogin = project_metadata_oslogin(*entry.project_info_json).value_or(false);
  }
  if (changed && tpu_node_cacheable(job.node)) cache.store(TpuCacheKind::tpu, ref, entry, job.warnings);
}

void resolve_node(NodeJob& job, const TpuQuery& q, const TpuCache& cache, ProjectInfoCalls& projects) {
  // 1. The cache, in every candidate zone, before any gcloud call.
  if (!q.refresh) {
    for (const TpuNodeRef& ref : job.candidates) {
      auto entry = cache.load(TpuCacheKind::tpu, ref, job.warnings);
      if (!entry) continue;
      TpuNode node;
      try {
        node = parse_tpu_node(entry->describe_json, ref);
      } catch (const SetupError& e) {
        job.warnings.push_back("ignoring corrupt cache file " +
                               cache.path_for(TpuCacheKind::tpu, ref).string() + "; asking gcloud instead");
        continue;
      }
      if (!tpu_node_cacheable(node)) continue;
      job.node = std::move(node);
      job.from_cache = true;
      job.fetched_at = entry->fetched_at;
      check_tpu_node(job.node, job.warnings);
      complete_node(job, q, cache, *entry, projects);
      return;
    }
  }

  // 2. gcloud describe, zone by zone until found; the project's metadata (OS
  // Login) is asked for at the same time, once for all the project's TPUs.
  projects.start(job.candidates.front().project);
  std::vector<std::string> tried;
  for (std::size_t i = 0; i < job.candidates.size(); ++i) {
    const TpuNodeRef& ref = job.candidates[i];
    tried.push_back(ref.zone);
    GcloudResult r = run_gcloud(gcloud_args("tpu-vm", "describe", ref), q.gcloud_timeout, q.interrupt_fd);
    if (!r.ok()) {
      bool last = i + 1 == job.candidates.size();
      if (!last && classify_gcloud_failure(r) == GcloudFailure::not_found) continue;
      throw_gcloud_failure(r, GcloudSubject{"TPU", ref.name, ref.project, tried, job.zone_origin});
    }
    job.node = parse_tpu_node(r.out, ref);
    job.fetched_at = utc_now_iso8601();
    TpuCacheEntry entry{r.out, std::nullopt, job.fetched_at};
    try {
      check_tpu_node(job.node, job.warnings);
    } catch (const SetupError&) {
      cache.remove(TpuCacheKind::tpu, ref);
      throw;
    }
    if (tpu_node_cacheable(job.node)) {
      cache.store(TpuCacheKind::tpu, ref, entry, job.warnings);
    } else {
      cache.remove(TpuCacheKind::tpu, ref);
    }
    complete_node(job, q, cache, entry, projects);
    return;
  }
}

// Runs fn(job) for every job, at most kParallelGcloud at once; errors stay in job.error.
template <class Job, class Fn>
void run_parallel(std::vector<Job>& jobs, Fn fn) {
  for (std::size_t start = 0; start < jobs.size(); start += kParallelGcloud) {
    std::vector<std::future<void>> running;
    std::size_t end = std::min(jobs.size(), start + kParallelGcloud);
    for (std::size_t i = start; i < end; ++i) {
      if (end - start == 1) {
        try { fn(jobs[i]); } catch (...) { jobs[i].error = std::current_exception(); }
        continue;
      }
      running.push_back(std::async(std::launch::async, [&jobs, &fn, i] {
        try { fn(jobs[i]); } catch (...) { jobs[i].error = std::current_exception(); }
      }));
    }
    for (auto& f : running) f.get();
  }
}

// ---- queued resources --------------------------------------------------------

struct QrJob {
  std::vector<TpuNodeRef> candidates;
  std::string zone_origin;
  QueuedResource qr;
  bool from_cache = false;
  std::vector<std::string> warnings;
  std::exception_ptr error;
};

void resolve_qr(QrJob& job, const TpuQuery& q, const TpuCache& cache) {
  if (!q.refresh) {
    for (const TpuNodeRef& ref : job.candidates) {
      auto entry = cache.load(TpuCacheKind::queued_resource, ref, job.warnings);
      if (!entry) continue;
      try {
        job.qr = parse_queued_resource(entry->describe_json, ref);
      } catch (const SetupError&) {
        job.warnings.push_back("ignoring corrupt cache file " +
                               cache.path_for(TpuCacheKind::queued_resource, ref).string() +
                               "; asking gcloud instead");
        continue;
      }
      if (job.qr.state != "ACTIVE") continue;
      job.from_cache = true;
      return;
    }
  }
  std::vector<std::string> tried;
  for (std::size_t i = 0; i < job.candidates.size(); ++i) {
    const TpuNodeRef& ref = job.candidates[i];
    tried.push_back(ref.zone);
    GcloudResult r = run_gcloud(gcloud_args("queued-resources", "describe", ref), q.gcloud_timeout, q.interrupt_fd);
    if (!r.ok()) {
      bool last = i + 1 == job.candidates.size();
      if (!last && classify_gcloud_failure(r) == GcloudFailure::not_found) continue;
      throw_gcloud_failure(r, GcloudSubject{"queued resource", ref.name, ref.project, tried,
                                            job.zone_origin});
    }
    job.qr = parse_queued_resource(r.out, ref);
    if (job.qr.state != "ACTIVE") {
      cache.remove(TpuCacheKind::queued_resource, ref);
      check_queued_resource(job.qr);
    }
    cache.store(TpuCacheKind::queued_resource, ref, TpuCacheEntry{r.out, std::nullopt, utc_now_iso8601()},
                job.warnings);
    return;
  }
}

// ---- workers -----------------------------------------------------------------

// The refs a name may mean, and where their zone came from: a full resource
// name is one ref; a short name is one per zone of the query's project. Zone
// and project are looked up only when a short name needs them, and once.
class RefLookup {
 public:
  explicit RefLookup(const TpuQuery& q) : q_(q) {}

  std::pair<std::vector<TpuNodeRef>, std::string> operator()(const std::string& text) {
    if (auto full = parse_full_name(text)) {
      validate("project", full->project, project_re());
      validate("zone", full->zone, zone_re());
      validate("name", full->name, name_re());
      return std::pair{std::vector<TpuNodeRef>{*full}, std::string("the full resource name")};
    }
    validate("TPU or queued resource name", text, name_re());
    if (!project_) project_ = resolve_project(q_);
    if (!zones_) zones_ = resolve_zones(q_);
    validate("project", project_->values.at(0), project_re());
    std::vector<TpuNodeRef> refs;
    for (const auto& z : zones_->values) {
      validate("zone", z, zone_re());
      refs.push_back({project_->values.at(0), z, text});
    }
    if (refs.empty()) throw UsageError("--zone is empty");
    return std::pair{refs, zones_->origin};
  }

 private:
  const TpuQuery& q_;
  std::optional<Setting> project_, zones_;
};

// Describes the queued resources (in parallel) and adds a target for each,
// with a node job per slice.
void add_queued_resources(const std::vector<std::string>& qr_names, RefLookup& refs_for, const TpuQuery& q,
                          const TpuCache& cache, std::vector<TpuTarget>& targets, std::vector<NodeJob>& jobs,
                          std::vector<std::string>& warnings) {
  std::vector<QrJob> qr_jobs;
  for (const auto& name : qr_names) {
    auto [refs, origin] = refs_for(name);
    QrJob job;
    job.candidates = refs;
    job.zone_origin = origin;
    qr_jobs.push_back(std::move(job));
  }
  run_parallel(qr_jobs, [&](QrJob& job) { resolve_qr(job, q, cache); });
  for (auto& job : qr_jobs) {
    if (job.error) std::rethrow_exception(job.error);
    warnings.insert(warnings.end(), job.warnings.begin(), job.warnings.end());
    TpuTarget t{job.qr.ref.name, true, {}};
    for (std::size_t s = 0; s < job.qr.nodes.size(); ++s) {
      NodeJob nj;
      nj.candidates = {job.qr.nodes[s]};
      nj.zone_origin = "queued resource " + job.qr.ref.name;
      nj.slice = static_cast<int>(s);
      nj.queued_resource = job.qr.ref.name;
      t.jobs.push_back(jobs.size());
      jobs.push_back(std::move(nj));
    }
    targets.push_back(std::move(t));
  }
}

// Where the nodes came from, for `tpush workers -v` and the log: gcloud, the
// cache, or how many of each.
std::string resolution_source(const std::vector<NodeJob>& jobs, std::size_t cached) {
  if (jobs.size() == 1) {
    const NodeJob& job = jobs.front();
    const std::string what = job.node.ref.name + " (" + job.node.ref.project + "/" + job.node.ref.zone + ")";
    return job.from_cache ? "cache (gcloud describe " + what + " at " + job.fetched_at + ")"
                          : "gcloud describe " + what;
  }
  std::string s;
  if (jobs.size() - cached > 0) s += "gcloud describe (" + std::to_string(jobs.size() - cached) + " TPUs)";
  if (cached > 0) s += std::string(s.empty() ? "" : ", ") + "cache (" + std::to_string(cached) + " TPUs)";
  return s;
}

}  // namespace

fs::path default_tpu_cache_dir() {
  if (auto xdg = env_or_empty("XDG_CACHE_HOME"); !xdg.empty() && fs::path(xdg).is_absolute()) {
    return fs::path(xdg) / "tpush";
  }
  if (auto home = env_or_empty("HOME"); !home.empty()) return fs::path(home) / ".cache" / "tpush";
  return fs::temp_directory_path() / ("tpush-cache-" + env_or_empty("USER"));
}

TpuResolution resolve_tpus(const TpuQuery& q) {
  const WorkerSelection selection = WorkerSelection::parse(q.worker_selection);
  const std::vector<std::string> tpu_names = split_list(q.tpus);
  const std::vector<std::string> qr_names = split_list(q.queued_resources);
  TpuResolution res;
  if (tpu_names.empty() && qr_names.empty()) return res;
  if (q.gcloud_timeout.count() <= 0) throw UsageError("--gcloud-timeout must be at least 1 second");

  const TpuCache cache(q.cache_dir.empty() ? default_tpu_cache_dir() : q.cache_dir);
  RefLookup refs_for(q);

  std::vector<TpuTarget> targets;
  std::vector<NodeJob> jobs;
  for (const auto& name : tpu_names) {
    auto [refs, origin] = refs_for(name);
    NodeJob job;
    job.candidates = refs;
    job.zone_origin = origin;
    targets.push_back({refs.front().name, false, {jobs.size()}});
    jobs.push_back(std::move(job));
  }
  // Queued resources first: their describe names the nodes.
  add_queued_resources(qr_names, refs_for, q, cache, targets, jobs, res.warnings);

  ProjectInfoCalls projects(q.gcloud_timeout, q.interrupt_fd);
  run_parallel(jobs, [&](NodeJob& job) { resolve_node(job, q, cache, projects); });
  for (auto& job : jobs) {
    if (job.error) std::rethrow_exception(job.error);
  }

  TpuWorkerMaker maker(q, cache, selection, /*prefix_names=*/targets.size() > 1);
  std::size_t cached = 0;
  for (const TpuTarget& t : targets) {
    for (std::size_t ji : t.jobs) {
      const NodeJob& job = jobs[ji];
      res.warnings.insert(res.warnings.end(), job.warnings.begin(), job.warnings.end());
      if (job.from_cache) ++cached;
      maker.add_node(t, job, res);
    }
  }
  res.from_cache = cached > 0;
  maker.warn_no_external(res.warnings);
  res.source = resolution_source(jobs, cached);
  return res;
}

}  // namespace tpush::inventory
