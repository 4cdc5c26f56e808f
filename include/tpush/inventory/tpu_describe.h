// A TPU VM node as `gcloud compute tpus tpu-vm describe --format=json` shows
// it, reduced to what tpush needs, and the rules for its state.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tpush::inventory {

struct TpuNodeRef {
  std::string project, zone, name;

  bool operator==(const TpuNodeRef&) const = default;
  std::string text() const { return name + " (" + project + "/" + zone + ")"; }
};

struct TpuEndpoint {
  std::string internal_ip;  // networkEndpoints[].ipAddress
  std::string external_ip;  // networkEndpoints[].accessConfig.externalIp, "" when none
};

struct TpuNode {
  TpuNodeRef ref;
  std::string id;     // numeric id as text (JSON string or integer, never via a double)
  std::string state;  // READY, CREATING, ...
  std::string health; // HEALTHY, UNHEALTHY_MAINTENANCE, "" when absent
  std::string accelerator_type;
  int nics = 1;       // networkConfigs entries (endpoints are interleaved when > 1)
  std::vector<TpuEndpoint> workers;  // worker w = networkEndpoints[w * nics]
};

// Parses describe JSON for the node `requested` (used for names in errors).
// Throws SetupError on malformed JSON or a missing/invalid field.
TpuNode parse_tpu_node(std::string_view json_text, const TpuNodeRef& requested);

// READY proceeds. CREATING, STARTING, REPAIRING, RESTARTING, REIMAGING (and
// other transitional or unknown states) add a warning and proceed. STOPPED,
// STOPPING, DELETING, HIDDEN, PREEMPTED, TERMINATED throw SetupError naming
// the state and what to do. A health other than HEALTHY warns. A node with
// no endpoints throws.
void check_tpu_node(const TpuNode& node, std::vector<std::string>& warnings);

// Whether a described node may be kept in the cache (READY with endpoints).
bool tpu_node_cacheable(const TpuNode& node);

}  // namespace tpush::inventory
