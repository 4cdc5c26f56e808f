// From the command line's worker options to the list of workers to contact.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "tpush/commands/cli/options.h"
#include "tpush/inventory/tpu_resolve.h"
#include "tpush/inventory/worker.h"

namespace tpush::commands {

struct Targets {
  std::vector<inventory::Worker> workers;
  // Set when every worker came from -t / --queued-resource (origins line up).
  std::optional<inventory::TpuResolution> tpu;
  // The TPUs resolved: -t's, then the `tpu:NAME` members of host lists.
  std::vector<std::string> tpu_names;
};

// Host lists (-w, -H, minus -x) first, then TPUs. UsageError when there are
// none. Ctrl-C on `signal_fd` while gcloud runs throws Interrupted.
Targets resolve_targets(const Options& o, int signal_fd);

// For workers resolved from the TPU cache: a fresh describe, to retry workers
// whose cached address failed. Empty when there is nothing to refresh.
std::function<std::vector<inventory::Worker>()> tpu_refresher(const Options& o, const Targets& t,
                                                              int signal_fd);

}  // namespace tpush::commands
