// How a TPU VM's workers let people in, beyond their addresses: OS Login
// (the login name comes from the user's OS Login profile, not $USER), the
// instance names IAP tunnels need, and what to run when a worker refuses
// gcloud's key. Everything here reads gcloud's JSON; nothing runs gcloud.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tpush::inventory {

// "enable-oslogin" in a describe output's `metadata` object: true/false when
// set (gcloud accepts TRUE/true/1 ...), nullopt when absent. The instance's
// value, when set, overrides the project's.
std::optional<bool> tpu_metadata_oslogin(std::string_view describe_json);

// The same key in `gcloud compute project-info describe --format=json`
// (commonInstanceMetadata.items). Throws SetupError on malformed JSON.
std::optional<bool> project_metadata_oslogin(std::string_view project_info_json);

// The POSIX user name of the primary account in `gcloud compute os-login
// describe-profile --format=json` (else the first account). Throws
// SetupError naming the fix when there is none.
std::string os_login_username(std::string_view profile_json);

// The `hostname` guest attribute of each worker (gcloud matches on the key
// alone, whatever its namespace): worker number -> instance name, as
// `gcloud compute start-iap-tunnel` wants it. Throws SetupError on malformed JSON.
std::map<int, std::string> parse_worker_hostnames(std::string_view guest_attributes_json, const std::string& what);

// The argv of an IAP tunnel to a worker's port, speaking on stdin/stdout:
// what gcloud's own `tpu-vm ssh --tunnel-through-iap` uses as ProxyCommand.
std::vector<std::string> iap_tunnel_argv(const std::string& instance, const std::string& zone,
                                         const std::string& project, std::uint16_t port = 22);

// What to run once so a TPU's workers accept gcloud's key: gcloud adds it to
// the TPU's metadata on its first `tpu-vm ssh` (or to the OS Login profile).
std::string key_propagation_hint(const std::string& tpu, const std::string& zone, const std::string& project,
                                 bool oslogin);

}  // namespace tpush::inventory
