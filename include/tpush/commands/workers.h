// `tpush workers`: what tpush resolved, and from where.
//
//   tpush workers -t mytpu           one line per worker
//   tpush workers -t mytpu --json    a JSON array
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "tpush/inventory/tpu.h"
#include "tpush/inventory/worker.h"

namespace tpush::commands {

// Shown for a worker whose target.user / target.port are still empty / 0
// (pass the CLI's -l and -p here, or apply them to the workers first).
struct WorkerDefaults {
  std::string user;  // "" = $USER
  uint16_t port = 22;
};

// Prints `workers`; `tpu` (may be null) supplies each worker's origin when the
// workers came from resolve_tpus (then workers[i] matches tpu->origins[i]).
// Text: label, address:port, user, source - columns aligned. JSON: an array of
// objects with label, host, port, user, env, host_key_aliases,
// pinned_host_key and, for TPU workers, tpu/project/zone/worker/... Returns
// the exit code (0). Warnings are not printed here.
int print_workers(const std::vector<inventory::Worker>& workers, const inventory::TpuResolution* tpu,
                  bool json, std::ostream& out, const WorkerDefaults& defaults = {});

}  // namespace tpush::commands
