// Host keys from gcloud's guest attributes, and gcloud's known_hosts aliases.
//
// `gcloud compute tpus tpu-vm get-guest-attributes NAME --format=json` prints
// a flat list, one entry per attribute and worker:
//   [{"key": "ssh-ed25519", "namespace": "hostkeys", "value": "AAAAC3...", "worker_id": 0}, ...]
// (the API's own {"guestAttributes": [{"queryPath", "queryValue": {"items"}}]}
// shape is accepted too).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tpush::inventory {

// worker -> base64 of its ssh-ed25519 host key (namespace "hostkeys").
// Entries whose value is not base64 are skipped. Throws SetupError on
// malformed JSON, naming `what`.
std::map<int, std::string> parse_ed25519_host_keys(std::string_view json_text, const std::string& what);

// gcloud's HostKeyAlias for a TPU worker: "tpu.<id>-<worker>", and with the
// host key known "tpu.<id>-<worker>-<last 6 chars of its base64>" (the name
// gcloud records in ~/.ssh/google_compute_known_hosts). Suffixed name first.
std::vector<std::string> tpu_host_key_aliases(const std::string& node_id, int worker,
                                              const std::optional<std::string>& ed25519_base64);

}  // namespace tpush::inventory
