// TPU VM workers resolved through gcloud: `-t NAME` and `--queued-resource QR`.
//
//   TpuQuery q;  q.tpus = {"mytpu"};
//   TpuResolution r = resolve_tpus(q);   // throws UsageError / SetupError
//   r.workers -> connect; r.warnings -> print as "tpush: warning: ..."
//
// A second resolution of the same TPU is served from the cache (no gcloud
// call). When a worker resolved from the cache cannot be reached, the caller
// resolves again with refresh = true (TPU addresses change after maintenance
// and recreation) and retries once.
#pragma once

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tpush/inventory/worker.h"

namespace tpush::inventory {

struct TpuQuery {
  std::vector<std::string> tpus;              // -t/--tpu, repeatable; items may be comma lists or
                                              // projects/P/locations/Z/nodes/N
  std::vector<std::string> queued_resources;  // --queued-resource, repeatable / comma list
  std::string zone;     // --zone; "" = TPUSH_ZONE, CLOUDSDK_COMPUTE_ZONE, then gcloud config.
                        // A comma list tries each zone in order until the TPU is found.
  std::string project;  // --project; "" = CLOUDSDK_CORE_PROJECT, then gcloud config
  std::string worker_selection = "all";  // --worker: all | 0 | 1,4 | 1-3 (per TPU / per slice)
  bool internal_ip = false;      // --internal-ip: connect to networkEndpoints[].ipAddress
  bool refresh = false;          // --refresh: ignore the cache (it is still rewritten)
  bool fetch_host_keys = false;  // --fetch-host-keys: pin each worker's ssh-ed25519 host key
                                 // from gcloud's guest attributes
  bool tunnel_through_iap = false;  // --tunnel-through-iap: reach each worker through
                                    // `gcloud compute start-iap-tunnel` (its instance name
                                    // comes from the guest attributes)
  std::chrono::seconds gcloud_timeout{60};  // --gcloud-timeout, per gcloud call
  std::filesystem::path cache_dir;  // "" = $XDG_CACHE_HOME/tpush, else ~/.cache/tpush
  int interrupt_fd = -1;  // watched (never read) while gcloud runs, e.g. SignalScope::fd():
                          // readable -> gcloud killed, GcloudInterrupted thrown (exit 130)
};

// Where one resolved worker came from (parallel to TpuResolution::workers).
struct WorkerOrigin {
  std::string tpu;               // node name
  std::string project, zone;
  std::string queued_resource;   // "" unless resolved through --queued-resource
  std::string node_id;           // numeric TPU id, as text
  int worker = 0;                // gcloud's worker number
  int num_workers = 0;
  int slice = -1;                // queued resources only
  std::string internal_ip, external_ip;
  std::string instance;          // the worker's instance name (guest attribute `hostname`), when known
  bool oslogin = false;          // OS Login is on (the TPU's metadata, else its project's)
  bool from_cache = false;
  std::string fetched_at;        // when gcloud described it (ISO 8601, UTC)
};

struct TpuResolution {
  // Labels: w0..wN-1 for one TPU; s<slice>w<worker> for a queued resource;
  // prefixed "<name>/" when several TPUs or queued resources were asked for.
  // target.user is "" and target.port 0: the CLI's -l / -p / defaults apply.
  // env: TPUSH_WORKER, TPUSH_NUM_WORKERS (gcloud numbering, per TPU/slice),
  // and for queued resources TPUSH_SLICE, TPUSH_NUM_SLICES.
  // host_key_aliases: gcloud's google_compute_known_hosts names,
  // "tpu.<id>-<worker>" and, when the host key is known, "tpu.<id>-<worker>-<suffix>"
  // (suffix: the last 6 characters of the ssh-ed25519 key's base64).
  // pinned_host_key: "ssh-ed25519 AAAA..." with fetch_host_keys.
  // With OS Login on: target.user is the profile's POSIX name (user_from says
  // so). With tunnel_through_iap: iap says how (instance, slice). key_hint: what
  // to run when the worker refuses gcloud's key.
  std::vector<Worker> workers;
  std::vector<WorkerOrigin> origins;    // parallel to workers
  std::vector<std::string> warnings;    // state CREATING, UNHEALTHY_MAINTENANCE, corrupt cache ...
  bool from_cache = false;              // true when any worker came from the cache
  std::string source;                   // e.g. "gcloud describe mytpu (my-project/us-central2-b)"
};

// Throws UsageError (exit 2), SetupError (exit 255), GcloudInterrupted (gcloud.h; exit 130).
TpuResolution resolve_tpus(const TpuQuery& query);

// The cache directory a query uses ($XDG_CACHE_HOME/tpush or ~/.cache/tpush).
std::filesystem::path default_tpu_cache_dir();

}  // namespace tpush::inventory
