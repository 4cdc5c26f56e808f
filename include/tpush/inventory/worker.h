// A worker: one host tpush runs on, as resolved from -w, -H, or a TPU.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tpush::inventory {

// Where and as whom to connect. Empty/zero fields mean "use the default"
// (-l / $USER for the user, -p / 22 for the port).
struct HostSpec {
  std::string user;
  std::string host;   // name or address; IPv6 without brackets
  uint16_t port = 0;  // 0: default
  std::string text;   // as the user wrote it (without user@), for labels and errors

  bool operator==(const HostSpec&) const = default;
};

// A `tpu:NAME` item of a host list (a group of hosts and pods) stands for every
// worker of that TPU: host is "tpu:NAME" (no host name holds ':'), resolved
// through gcloud later. Returns NAME, or "" for an ordinary host.
inline std::string tpu_member(const HostSpec& h) {
  return h.host.rfind("tpu:", 0) == 0 && h.port == 0 ? h.host.substr(4) : std::string();
}

// A TPU worker reached through IAP (--tunnel-through-iap): its instance,
// and the slice it belongs to, whose workers can reach each other.
struct IapWorker {
  std::string instance;  // as gcloud compute start-iap-tunnel wants it
  std::string zone, project;
  std::string slice;     // "project/zone/node": one IAP tunnel carries the slice
};

struct Worker {
  HostSpec target;
  std::string label;  // shown as the output prefix and in the summary
  // Extra names under which this worker's host key may be recorded
  // (gcloud's `tpu.<id>-<worker>` aliases in google_compute_known_hosts).
  std::vector<std::string> host_key_aliases;
  // A host key obtained out of band (gcloud guest attributes), as a
  // known_hosts-style "type base64" string; when set it is authoritative.
  std::optional<std::string> pinned_host_key;
  // Where target.user came from when not the host list ("OS Login profile").
  std::string user_from;
  // Reached through IAP: how (else null). Behind a pointer: most workers have
  // none, and a Worker is kept for each of up to a million hosts.
  std::shared_ptr<const IapWorker> iap;
  // What to run once when the worker refuses our key (a TPU: let gcloud add it).
  std::string key_hint;
  // Extra variables exported to the remote command (e.g. TPUSH_SLICE).
  std::vector<std::pair<std::string, std::string>> env;
};

}  // namespace tpush::inventory
