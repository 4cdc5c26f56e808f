// Making tpush workers of resolved TPU nodes (resolve_tpus, tpu_resolve.h): each
// selected worker's address (external, internal, or an IAP instance name), its
// login (the OS Login user, asked once, when a node first needs it), label
// (w3, s1w0, NAME/w3), pinned host key and aliases and TPUSH_* environment,
// with where each came from (WorkerOrigin).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tpush/inventory/tpu_cache.h"
#include "tpush/inventory/tpu_describe.h"
#include "tpush/inventory/tpu_resolve.h"
#include "tpush/inventory/worker.h"
#include "tpush/inventory/worker_selection.h"

namespace tpush::inventory {

// One node as the cache or gcloud described it.
struct ResolvedNode {
  TpuNode node;
  int slice = -1;               // its slice of a queued resource, else -1
  std::string queued_resource;  // the queued resource it is a slice of, if any
  bool from_cache = false;
  std::string fetched_at;
  std::optional<std::map<int, std::string>> host_keys;  // when guest attributes are known
  std::map<int, std::string> hostnames;                  // instance names, from the same
  bool oslogin = false;
};

// What one name asked for: a TPU, or a queued resource and its slices.
struct TpuTarget {
  std::string name;  // as asked for
  bool is_qr = false;
  std::vector<std::size_t> jobs;  // its nodes, in slice order (indexes into the run's nodes)
};

class TpuWorkerMaker {
 public:
  TpuWorkerMaker(const TpuQuery& q, const TpuCache& cache, const WorkerSelection& selection, bool prefix_names);

  // The selected workers of one node of `t`, appended to `res`.
  void add_node(const TpuTarget& t, const ResolvedNode& node, TpuResolution& res);
  // A warning for the TPUs reached at internal addresses without being asked to.
  void warn_no_external(std::vector<std::string>& warnings) const;

 private:
  Worker worker(const TpuTarget& t, const ResolvedNode& job, int w, const TpuEndpoint& ep, const std::string& shown);
  static WorkerOrigin origin(const ResolvedNode& job, int w, const TpuEndpoint& ep);

  const TpuQuery& q_;
  const TpuCache& cache_;
  const WorkerSelection& selection_;
  const bool prefix_names_;
  std::set<std::string> no_external_;  // TPUs reached at internal addresses without being asked to
  std::optional<std::string> login_;   // the OS Login user name, asked once
};

}  // namespace tpush::inventory
