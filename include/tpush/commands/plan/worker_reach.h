// How each worker is reached: its address, port, user, keys, host-key rules
// and the way there (direct, jump hosts, a proxy command), settled from, in
// this order: the user@ and :port written in the host list (a host's own), then
// tpush's flags (-l and -p: the defaults for hosts that name none; -l also wins
// over an OS Login user), ssh_config (-F, -o, or ~/.ssh/config then
// /etc/ssh/ssh_config), then tpush's defaults. Every value remembers where it
// came from, for `tpush workers` and for messages.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tpush/commands/cli/options.h"
#include "tpush/inventory/worker.h"
#include "tpush/ssh/identity/host_key_policy.h"
#include "tpush/ssh_config/config.h"

namespace tpush::commands {

// A value and where it came from: "-l", "host list", "~/.ssh/config:12",
// "-o", "default", ...
template <typename T>
struct Sourced {
  T value{};
  std::string from;
};

struct JumpHopReach;

struct Reach {
  Sourced<std::string> hostname;  // what to connect to
  Sourced<std::uint16_t> port;
  Sourced<std::string> user;
  // Tried after the agent, in order; existing files only matter at run time.
  std::vector<Sourced<std::filesystem::path>> identity_files;
  // CertificateFile: offered first, each signed for by its key among the
  // above; when there are none, each key's KEY-cert.pub is, as in ssh.
  std::vector<Sourced<std::filesystem::path>> certificate_files;
  Sourced<bool> identities_only;
  Sourced<std::string> identity_agent;  // a socket path; "none": no agent; "": $SSH_AUTH_SOCK
  // -A / ForwardAgent: "no", "yes" (the agent at $SSH_AUTH_SOCK), or an agent socket.
  Sourced<std::string> forward_agent = {"no", "default"};

  enum class Via { direct, jump, command };
  Via via = Via::direct;
  std::vector<JumpHopReach> jump;         // outermost first
  Sourced<std::string> proxy_command;     // its tokens expanded
  std::vector<std::string> proxy_argv;    // a program and its arguments (IAP), instead of a line
  // --tunnel-through-iap: the TPU slice whose workers carry each other (one
  // tunnel to one of them), with the IAP tunnel above as each one's own way.
  std::string iap_slice;
  std::string via_from;                   // where the jump chain or proxy came from

  Sourced<int> connect_timeout;      // seconds
  Sourced<int> alive_interval;       // seconds
  Sourced<int> alive_count;
  Sourced<int> connection_attempts;
  Sourced<int> address_family = {AF_UNSPEC, "default"};
  Sourced<ssh::HostKeyMode> host_key_check;
  Sourced<std::vector<std::filesystem::path>> user_known_hosts;    // the first is written to
  Sourced<std::vector<std::filesystem::path>> global_known_hosts;  // read only
  Sourced<std::string> host_key_alias;                             // "" when none

  // "alice@bastion:22 > bob@inner:2222" or the proxy command; "" when direct.
  std::string via_text() const;
};

// A jump host, reached by the same rules (its own ssh_config entry applies;
// -l, -p and -J name the workers only, as with ssh).
struct JumpHopReach {
  std::string name;  // "alice@bastion:22", as messages name it
  Reach reach;
};

// Where ReachPlanner::plan puts one worker's reach after another's: the
// reach, and what it is a copy of, so that planning a worker reached like the
// one before it copies nothing but the name.
struct ReachScratch {
  Reach reach;
  const void* copy_of = nullptr;  // the planner's shared reach `reach` equals but for the name
};

class ReachPlanner {
 public:
  // Reads ssh_config once: -F FILE (none: no file) and -o lines, else the
  // defaults. Throws UsageError naming file:line when ssh would refuse it.
  ReachPlanner(const Options& o, std::filesystem::path home, std::string local_user);

  // Throws UsageError when ssh would refuse this host (file:line and the fix).
  Reach plan(const inventory::Worker& w) const;
  // The same into `scratch.reach`, reusing it: for planning many workers one
  // after the other (tpush workers), each used before the next. Hand the same
  // scratch every time, and change nothing in it.
  void plan(const inventory::Worker& w, ReachScratch& scratch) const;

  // Things ssh would do that tpush does not (Match exec, ...), once each.
  const std::vector<std::string>& warnings() const { return config_.warnings(); }
  const std::filesystem::path& home() const { return home_; }

 private:
  void plan_host(const ssh_config::HostQuery& query, bool is_jump, int depth, Reach& r,
                 const void** copy_of = nullptr) const;
  Reach plan_host_afresh(const ssh_config::HostQuery& query, bool is_jump, int depth) const;
  // plan_host_afresh's parts, each setting its fields of `r` from tpush's
  // flags, ssh_config (`c`), tpush's config file and the defaults.
  void plan_keys(const ssh_config::HostConfig& c, Reach& r) const;  // identity files and agent
  void plan_way(const ssh_config::HostConfig& c, bool is_jump, int depth, Reach& r) const;  // -J, proxies
  void plan_deadlines(const ssh_config::HostConfig& c, Reach& r) const;  // timeouts, keepalives, address family
  void plan_host_keys(const ssh_config::HostConfig& c, Reach& r) const;  // policy, known_hosts, alias
  // "config FILE:LINE", where tpush's config file set `key`.
  std::string config_origin(const char* key) const;
  std::vector<JumpHopReach> plan_jump(const std::vector<ssh_config::JumpHop>& hops, int depth) const;

  const Options& options_;
  std::filesystem::path home_;
  std::string local_user_;
  ssh_config::SshConfig config_;
  std::vector<std::filesystem::path> default_identities_;  // those of ssh::default_identity_files that exist
  std::vector<std::filesystem::path> default_user_known_hosts_, default_global_known_hosts_;
  std::filesystem::path gcloud_known_hosts_;

  // Reaches planned once for every host with the same sharing key (the
  // config's, whether a jump host, the depth), kept for the next one.
  struct Shared {
    Reach reach;
    bool named_by_query;  // no HostName: each host's hostname is its own name
  };
  static constexpr std::size_t kMaxShared = 256;  // hosts whose config is each its own need none
  mutable std::mutex shared_mutex_;
  mutable std::unordered_map<std::string, Shared> shared_;
};

}  // namespace tpush::commands
