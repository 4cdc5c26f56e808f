// `tpush workers`: what tpush resolved, how it would reach each worker, and
// where every value came from. It contacts no worker.
//
//   tpush workers -t mytpu           one line per worker
//   tpush workers -t mytpu --json    a JSON array
//   tpush workers -v                 each line followed by every setting and its origin
#pragma once

#include <functional>
#include <ostream>
#include <vector>

#include "tpush/commands/plan/worker_reach.h"
#include "tpush/inventory/tpu_resolve.h"
#include "tpush/inventory/worker.h"

namespace tpush::commands {

// Prints `workers`, whose reach is `reaches[i]`; `tpu` (may be null) supplies
// each worker's origin when the workers came from resolve_tpus (then
// workers[i] matches tpu->origins[i]).
// Text: label, address:port, user, the way there when not direct, source -
// columns aligned; with `details`, each worker's settings with their origins.
// JSON: an array of objects with label, host, port, user, env,
// host_key_aliases, pinned_host_key, "reach" (every setting with "value" and
// "from") and, for TPU workers, tpu/project/zone/worker/... Returns 0.
int print_workers(const std::vector<inventory::Worker>& workers, const std::vector<Reach>& reaches,
                  const inventory::TpuResolution* tpu, bool json, bool details, std::ostream& out);
// The same, planning each worker's reach when it is printed: `plan(i, s)`
// puts worker i's in `s.reach` (ReachPlanner::plan), the same scratch for
// every worker. JSON is streamed, so its memory does not grow with the number
// of workers beyond the workers themselves; text keeps the cells.
int print_workers(const std::vector<inventory::Worker>& workers,
                  const std::function<void(std::size_t, ReachScratch&)>& plan, const inventory::TpuResolution* tpu,
                  bool json, bool details, std::ostream& out);

}  // namespace tpush::commands
