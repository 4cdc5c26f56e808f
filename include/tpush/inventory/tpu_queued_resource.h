// A queued resource as `gcloud compute tpus queued-resources describe
// --format=json` shows it: its state and the TPU nodes (slices) it holds.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tpush/inventory/tpu_describe.h"

namespace tpush::inventory {

struct QueuedResource {
  TpuNodeRef ref;             // name = the queued resource id
  std::string state;          // state.state: ACTIVE, WAITING_FOR_RESOURCES, FAILED, ...
  std::string error_message;  // state.failedData.error.message, when present
  std::vector<TpuNodeRef> nodes;  // one per slice, in slice order
};

// For each tpu.nodeSpec[]: nodeId, or multisliceParams / multiNodeParams
// (nodeIdPrefix, default the queued resource id; nodes prefix-0 ...
// prefix-(nodeCount-1)); project and zone from `parent`. Throws SetupError on
// malformed JSON.
QueuedResource parse_queued_resource(std::string_view json_text, const TpuNodeRef& requested);

// ACTIVE proceeds; any other state throws SetupError naming it (with the
// failure message for FAILED) and what to do.
void check_queued_resource(const QueuedResource& qr);

}  // namespace tpush::inventory
