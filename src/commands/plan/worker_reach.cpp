#include "tpush/commands/plan/worker_reach.h"

#include "tpush/inventory/tpu_access.h"
#include "tpush/ssh/identity/credentials.h"
#include "tpush/ssh/session_watch.h"
#include "tpush/util/environment.h"
#include "tpush/util/error.h"
#include "tpush/util/string.h"

namespace tpush::commands {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxJumpDepth = 8;  // a ProxyJump loop in ssh_config ends here

template <typename T, typename U>
Sourced<T> from_config(const ssh_config::ConfigField<U>& field) {
  return {static_cast<T>(*field.value), field.origin.to_string()};
}

ssh::HostKeyMode host_key_mode(ssh_config::StrictHostKeyChecking s) {
  switch (s) {
    case ssh_config::StrictHostKeyChecking::yes: return ssh::HostKeyMode::yes;
    case ssh_config::StrictHostKeyChecking::no: return ssh::HostKeyMode::no;
    // `ask` cannot be asked of a whole pod at once: a new key is recorded, as
    // with accept-new; a changed key still fails.
    case ssh_config::StrictHostKeyChecking::ask:
    case ssh_config::StrictHostKeyChecking::accept_new: return ssh::HostKeyMode::accept_new;
  }
  return ssh::HostKeyMode::accept_new;
}

int address_family(ssh_config::AddressFamily f) {
  switch (f) {
    case ssh_config::AddressFamily::inet: return AF_INET;
    case ssh_config::AddressFamily::inet6: return AF_INET6;
    case ssh_config::AddressFamily::any: return AF_UNSPEC;
  }
  return AF_UNSPEC;
}

std::string hop_name(const Reach& r) {
  const bool v6 = r.hostname.value.find(':') != std::string::npos;
  return r.user.value + "@" + (v6 ? "[" + r.hostname.value + "]" : r.hostname.value) + ":" +
         std::to_string(r.port.value);
}

}  // namespace

std::string Reach::via_text() const {
  switch (via) {
    case Via::direct: return {};
    case Via::command:
      if (!iap_slice.empty()) return "one IAP tunnel for TPU " + iap_slice + " (else its own: " + proxy_command.value + ")";
      return proxy_command.value;
    case Via::jump: {
      std::string out;
      for (const auto& hop : jump) out += (out.empty() ? "" : " > ") + hop.name;
      return out;
    }
  }
  return {};
}

ReachPlanner::ReachPlanner(const Options& o, fs::path home, std::string local_user)
    : options_(o), home_(std::move(home)), local_user_(std::move(local_user)) {
  ssh_config::SshConfigSources sources;
  sources.options = o.ssh_options;
  sources.files = ssh_config::ssh_config_files(home_, o.ssh_config_file);
  sources.home = home_;
  sources.local_user = local_user_;
  config_ = ssh_config::SshConfig::load_or_throw(sources);
  // What every host without settings of its own gets, made once: paths are
  // parsed into components when made, and the default keys are looked for on
  // disk (4 stats a host, 400,000 for a 100k range, before this).
  default_identities_ = ssh::default_identity_files(home_);
  default_user_known_hosts_ = {home_ / ".ssh" / "known_hosts"};
  default_global_known_hosts_ = {"/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"};
  gcloud_known_hosts_ = home_ / ".ssh" / "google_compute_known_hosts";
}

Reach ReachPlanner::plan(const inventory::Worker& w) const {
  ReachScratch s;
  plan(w, s);
  return std::move(s.reach);
}

void ReachPlanner::plan(const inventory::Worker& w, ReachScratch& scratch) const {
  Reach& r = scratch.reach;
  ssh_config::HostQuery q;
  q.host = w.target.host;
  // A user@ or :port written in the host list is that host's own and wins;
  // -l and -p are the defaults for hosts that name none (pdsh's and pssh's
  // rule). A user tpush found for the worker (user_from: the OS Login
  // profile) was written nowhere, so -l, being explicit, wins over it.
  const bool listed_user = !w.target.user.empty() && w.user_from.empty();
  if (listed_user) {
    q.user = w.target.user;
    q.user_from = "host list";
  } else if (!options_.user.empty()) {
    q.user = options_.user;
    q.user_from = "-l";
  } else if (!w.target.user.empty()) {
    q.user = w.target.user;
    q.user_from = w.user_from;
  }
  if (w.target.port) {
    q.port = w.target.port;
    q.port_from = "host list";
  } else if (options_.port) {
    q.port = options_.port;
    q.port_from = "-p";
  }
  plan_host(q, false, 0, r, &scratch.copy_of);
  if (w.iap) {
    // --tunnel-through-iap: the tunnel is the way there
    scratch.copy_of = nullptr;  // no longer the shared reach
    if (!options_.jump.empty())
      throw UsageError("-J and --tunnel-through-iap both say how to reach " + w.label + ": give one of them");
    r.via = Reach::Via::command;
    r.jump.clear();
    r.proxy_argv = inventory::iap_tunnel_argv(w.iap->instance, w.iap->zone, w.iap->project, r.port.value);
    r.proxy_command = {util::join(r.proxy_argv, " "), "--tunnel-through-iap"};
    r.iap_slice = w.iap->slice;
    r.via_from = "--tunnel-through-iap";
  }
}

void ReachPlanner::plan_host(const ssh_config::HostQuery& query, bool is_jump, int depth, Reach& r,
                             const void** copy_of) const {
  // Hosts that ssh_config treats alike (ssh_config::SshConfig::sharing_key) are
  // reached alike but for the name, when none is set: planned once, then
  // copied, unless `r` is a copy of the same already (*copy_of says).
  std::optional<std::string> key = config_.sharing_key(query);
  if (key) {
    *key += is_jump ? 'j' : 'w';
    *key += std::to_string(depth);
    const std::lock_guard lock(shared_mutex_);
    if (const auto it = shared_.find(*key); it != shared_.end()) {
      const Shared& shared = it->second;  // map nodes stay where they are: a stable identity
      if (copy_of == nullptr || *copy_of != &shared) r = shared.reach;
      if (copy_of != nullptr) *copy_of = &shared;
      if (shared.named_by_query) r.hostname.value = query.host;
      return;
    }
  }
  if (copy_of != nullptr) *copy_of = nullptr;
  r = plan_host_afresh(query, is_jump, depth);
  if (key) {
    const std::lock_guard lock(shared_mutex_);
    // An unset HostName leaves the origin empty: the name is the host's own.
    if (shared_.size() < kMaxShared) shared_.emplace(std::move(*key), Shared{r, r.hostname.from.empty()});
  }
}

std::string ReachPlanner::config_origin(const char* key) const { return "config " + options_.from_config.at(key); }

Reach ReachPlanner::plan_host_afresh(const ssh_config::HostQuery& query, bool is_jump, int depth) const {
  const ssh_config::HostConfig c = config_.resolve(query);
  if (!c.errors.empty())
    throw UsageError("ssh_config for host " + query.host + ": " + c.errors.front());
  Reach r;

  r.hostname = c.hostname.is_set() ? from_config<std::string>(c.hostname) : Sourced<std::string>{query.host, ""};
  const ReachDefaults& mine = options_.reach_defaults;  // tpush's config file
  r.port = c.port.is_set() ? from_config<std::uint16_t>(c.port)
           : mine.port     ? Sourced<std::uint16_t>{mine.port, config_origin("port")}
                           : Sourced<std::uint16_t>{22, "default"};
  r.user = c.user.is_set()      ? from_config<std::string>(c.user)
           : !mine.user.empty() ? Sourced<std::string>{mine.user, config_origin("user")}
                                : Sourced<std::string>{local_user_, "$USER"};
  plan_keys(c, r);
  plan_way(c, is_jump, depth, r);
  plan_deadlines(c, r);
  plan_host_keys(c, r);
  return r;
}

void ReachPlanner::plan_keys(const ssh_config::HostConfig& c, Reach& r) const {
  const ReachDefaults& mine = options_.reach_defaults;
  // -i first (for jump hosts too: keys are keys), then IdentityFile lines, then
  // the config file's; tpush's default keys when none names one (an
  // `IdentityFile none` line counts as naming one, as in ssh).
  for (const auto& f : options_.identities) r.identity_files.push_back({fs::absolute(f), "-i"});
  for (const auto& e : c.identity_files)
    if (!e.path.empty()) r.identity_files.push_back({e.path, e.origin.to_string()});
  for (const auto& f : mine.identities) r.identity_files.push_back({fs::absolute(f), config_origin("identity")});
  if (options_.identities.empty() && c.identity_files.empty() && mine.identities.empty())
    for (const auto& f : default_identities_) r.identity_files.push_back({f, "default"});
  for (const auto& e : c.certificate_files) r.certificate_files.push_back({e.path, e.origin.to_string()});
  r.identities_only = c.identities_only.is_set() ? from_config<bool>(c.identities_only) : Sourced<bool>{false, "default"};
  r.identity_agent = {"", "default"};
  if (c.identity_agent.is_set()) {
    std::string agent = *c.identity_agent.value;
    if (agent == "SSH_AUTH_SOCK") agent = "";
    else if (!agent.empty() && agent.front() == '$') agent = util::env_value(agent.c_str() + 1).value_or("none");
    r.identity_agent = {agent, c.identity_agent.origin.to_string()};
  }
  // -A and -a win over ForwardAgent, as in ssh; a $NAME socket is that variable's value.
  if (options_.forward_agent || options_.no_forward_agent) {
    r.forward_agent = {options_.no_forward_agent ? "no" : "yes", options_.no_forward_agent ? "-a" : "-A"};
  } else if (c.forward_agent.is_set()) {
    std::string agent = *c.forward_agent.value;
    if (agent == "SSH_AUTH_SOCK") agent = "yes";
    else if (agent.size() > 1 && agent.front() == '$') agent = util::env_value(agent.c_str() + 1).value_or("no");
    r.forward_agent = {agent, c.forward_agent.origin.to_string()};
  }
}

void ReachPlanner::plan_way(const ssh_config::HostConfig& c, bool is_jump, int depth, Reach& r) const {
  const ReachDefaults& mine = options_.reach_defaults;
  // The way there: -J (the workers only), else ProxyJump / ProxyCommand, else
  // the config file's jump.
  const auto jump_through = [&](const std::string& jump, const std::string& from) {
    ssh_config::ProxyJumpValue value;
    if (const std::string err = ssh_config::parse_proxy_jump(jump, value); !err.empty())
      throw UsageError((from == "-J" ? "-J " : from + ": jump = ") + jump + ": " + err + " (write " +
                       (from == "-J" ? "-J " : "jump = ") + "[user@]host[:port][,...])");
    if (!value.none) {
      r.via = Reach::Via::jump;
      r.jump = plan_jump(value.hops, depth);
      r.via_from = from;
    }
  };
  if (!is_jump && !options_.jump.empty()) {
    jump_through(options_.jump, "-J");
  } else if (c.proxy.is_set()) {
    const ssh_config::ProxySetting& p = *c.proxy.value;
    r.via_from = c.proxy.origin.to_string();
    if (p.kind == ssh_config::ProxySetting::Kind::command) {
      r.via = Reach::Via::command;
      r.proxy_command = {p.command, r.via_from};
    } else if (p.kind == ssh_config::ProxySetting::Kind::jump && !p.jump.none) {
      r.via = Reach::Via::jump;
      r.jump = plan_jump(p.jump.hops, depth);
    }
  } else if (!is_jump && !mine.jump.empty()) {
    jump_through(mine.jump, config_origin("jump"));
  }
}

void ReachPlanner::plan_deadlines(const ssh_config::HostConfig& c, Reach& r) const {
  const ReachDefaults& mine = options_.reach_defaults;
  r.connect_timeout = options_.connect_timeout ? Sourced<int>{*options_.connect_timeout, "--connect-timeout"}
                      : c.connect_timeout.is_set() ? from_config<int>(c.connect_timeout)
                      : mine.connect_timeout       ? Sourced<int>{*mine.connect_timeout, config_origin("connect-timeout")}
                                                   : Sourced<int>{static_cast<int>(ssh::kDefaultConnectTimeout.count()), "default"};
  // ServerAliveInterval 0 is OpenSSH's "off"; tpush never waits forever on a
  // silent worker, so 0 leaves its own default.
  if (options_.alive_interval) r.alive_interval = {*options_.alive_interval, "--alive-interval"};
  else if (c.server_alive_interval.is_set() && *c.server_alive_interval.value > 0)
    r.alive_interval = from_config<int>(c.server_alive_interval);
  else if (mine.alive_interval) r.alive_interval = {*mine.alive_interval, config_origin("alive-interval")};
  else r.alive_interval = {static_cast<int>(ssh::kDefaultAliveInterval.count()), "default"};
  r.alive_count = c.server_alive_count_max.is_set() && *c.server_alive_count_max.value > 0
                      ? from_config<int>(c.server_alive_count_max)
                      : Sourced<int>{ssh::kDefaultAliveCount, "default"};
  r.connection_attempts = c.connection_attempts.is_set() ? from_config<int>(c.connection_attempts)
                                                         : Sourced<int>{1, "default"};
  if (c.address_family.is_set())
    r.address_family = {address_family(*c.address_family.value), c.address_family.origin.to_string()};
}

void ReachPlanner::plan_host_keys(const ssh_config::HostConfig& c, Reach& r) const {
  const ReachDefaults& mine = options_.reach_defaults;
  if (options_.host_key_check)
    r.host_key_check = {ssh::parse_host_key_mode(*options_.host_key_check), "--host-key-check"};
  else if (c.strict_host_key_checking.is_set())
    r.host_key_check = {host_key_mode(*c.strict_host_key_checking.value),
                        c.strict_host_key_checking.origin.to_string()};
  else if (mine.host_key_check)
    r.host_key_check = {ssh::parse_host_key_mode(*mine.host_key_check), config_origin("host-key-check")};
  else r.host_key_check = {ssh::HostKeyMode::accept_new, "default"};
  auto paths = [](const std::vector<std::string>& v) { return std::vector<fs::path>(v.begin(), v.end()); };
  r.user_known_hosts = c.user_known_hosts_files.is_set()
                           ? Sourced<std::vector<fs::path>>{paths(*c.user_known_hosts_files.value),
                                                            c.user_known_hosts_files.origin.to_string()}
                           : Sourced<std::vector<fs::path>>{default_user_known_hosts_, "default"};
  // gcloud's own known_hosts is always read too: it names TPU VMs' keys.
  r.global_known_hosts = c.global_known_hosts_files.is_set()
                             ? Sourced<std::vector<fs::path>>{paths(*c.global_known_hosts_files.value),
                                                              c.global_known_hosts_files.origin.to_string()}
                             : Sourced<std::vector<fs::path>>{default_global_known_hosts_, "default"};
  r.global_known_hosts.value.push_back(gcloud_known_hosts_);
  r.host_key_alias = c.host_key_alias.is_set() ? from_config<std::string>(c.host_key_alias)
                                               : Sourced<std::string>{"", "default"};
}

std::vector<JumpHopReach> ReachPlanner::plan_jump(const std::vector<ssh_config::JumpHop>& hops, int depth) const {
  if (depth >= kMaxJumpDepth)
    throw UsageError("ProxyJump goes through more than " + std::to_string(kMaxJumpDepth) +
                     " jump hosts (a loop in ssh_config? check the ProxyJump lines with ssh -G HOST)");
  std::vector<JumpHopReach> out;
  for (std::size_t i = 0; i < hops.size(); ++i) {
    ssh_config::HostQuery q;
    q.host = hops[i].host;
    if (!hops[i].user.empty()) q.user = hops[i].user, q.user_from = "jump host";
    if (hops[i].port > 0) q.port = static_cast<std::uint16_t>(hops[i].port), q.port_from = "jump host";
    Reach hop;
    plan_host(q, true, depth + 1, hop);
    if (i > 0) {  // reached through the hops before it, whatever its own config says
      hop.via = Reach::Via::direct;
      hop.jump.clear();
    }
    out.push_back({hop_name(hop), std::move(hop)});
  }
  return out;
}

}  // namespace tpush::commands
