#include "tpush/commands/plan/openssh_config.h"

#include <map>

#include "tpush/util/shell_quote.h"

namespace tpush::commands {
namespace {

const char* mode_name(ssh::HostKeyMode m) {
  switch (m) {
    case ssh::HostKeyMode::yes: return "yes";
    case ssh::HostKeyMode::no: return "no";
    case ssh::HostKeyMode::accept_new: return "accept-new";
  }
  return "accept-new";
}

const char* family_name(int af) { return af == AF_INET ? "inet" : af == AF_INET6 ? "inet6" : "any"; }

std::string known_hosts_name(const OpenSshHost& h) {
  if (!h.reach->host_key_alias.value.empty()) return h.reach->host_key_alias.value;
  if (!h.host_key_aliases.empty()) return h.host_key_aliases.front();
  const auto& r = *h.reach;
  return r.port.value == 22 ? r.hostname.value : "[" + r.hostname.value + "]:" + std::to_string(r.port.value);
}

class Writer {
 public:
  explicit Writer(std::string pinned_file) : pinned_file_(std::move(pinned_file)) {}

  std::string host(const std::string& alias, const Reach& r, const std::string& key_alias) {
    std::string via;
    if (r.via == Reach::Via::jump) {
      for (const auto& hop : r.jump) via += (via.empty() ? "" : ",") + hop_alias(hop);
    }
    std::string out = "Host " + alias + "\n";
    line(out, "HostName", config_argument(r.hostname.value, true));
    line(out, "Port", std::to_string(r.port.value));
    line(out, "User", config_argument(r.user.value, false));
    for (const auto& f : r.identity_files) line(out, "IdentityFile", config_argument(f.value.string(), true));
    if (r.identity_files.empty()) line(out, "IdentityFile", "none");
    for (const auto& f : r.certificate_files) line(out, "CertificateFile", config_argument(f.value.string(), true));
    line(out, "IdentitiesOnly", r.identities_only.value ? "yes" : "no");
    const std::string& agent = r.identity_agent.value;
    line(out, "IdentityAgent", agent.empty() ? "SSH_AUTH_SOCK" : agent == "none" ? "none" : config_argument(agent, true));
    if (r.via == Reach::Via::jump) line(out, "ProxyJump", via);
    else if (r.via == Reach::Via::command) line(out, "ProxyCommand", proxy_line(r));
    else line(out, "ProxyCommand", "none");
    line(out, "ConnectTimeout", std::to_string(r.connect_timeout.value));
    line(out, "ServerAliveInterval", std::to_string(r.alive_interval.value));
    line(out, "ServerAliveCountMax", std::to_string(r.alive_count.value));
    line(out, "ConnectionAttempts", std::to_string(r.connection_attempts.value));
    line(out, "AddressFamily", family_name(r.address_family.value));
    line(out, "StrictHostKeyChecking", mode_name(r.host_key_check.value));
    std::string files;
    for (const auto& f : r.user_known_hosts.value) files += (files.empty() ? "" : " ") + config_argument(f.string(), true);
    line(out, "UserKnownHostsFile", files.empty() ? "none" : files);
    files.clear();
    for (const auto& f : r.global_known_hosts.value) files += (files.empty() ? "" : " ") + config_argument(f.string(), false);
    if (!pinned_file_.empty()) files += (files.empty() ? "" : " ") + config_argument(pinned_file_, false);
    line(out, "GlobalKnownHostsFile", files.empty() ? "none" : files);
    if (!key_alias.empty()) line(out, "HostKeyAlias", key_alias);
    line(out, "BatchMode", "yes");
    line(out, "LogLevel", "ERROR");
    return out;
  }

  std::string hops() const { return hop_text_; }

 private:
  static void line(std::string& out, const char* keyword, const std::string& value) {
    out += "  ";
    out += keyword;
    out += " ";
    out += value;
    out += "\n";
  }

  // ProxyCommand takes the rest of the line as it is (ssh hands it to a
  // shell): only its %-tokens are escaped.
  static std::string proxy_line(const Reach& r) {
    std::string line;
    if (r.proxy_argv.empty()) {
      line = r.proxy_command.value;
    } else {
      line = "exec";
      for (const auto& a : r.proxy_argv) line += " " + util::shell_quote(a);
    }
    std::string out;
    for (char c : line) out += c == '%' ? std::string("%%") : std::string(1, c);
    return out;
  }

  // Each jump host gets its own Host block (ssh reads only this file).
  std::string hop_alias(const JumpHopReach& hop) {
    auto it = hop_aliases_.find(hop.name);
    if (it != hop_aliases_.end()) return it->second;
    const std::string alias = "tpush-jump" + std::to_string(hop_aliases_.size());
    hop_aliases_.emplace(hop.name, alias);
    hop_text_ += host(alias, hop.reach, hop.reach.host_key_alias.value);
    return alias;
  }

  std::string pinned_file_;
  std::map<std::string, std::string> hop_aliases_;
  std::string hop_text_;
};

}  // namespace

std::string config_argument(const std::string& value, bool expands_tokens) {
  std::string v;
  for (char c : value) {
    if (expands_tokens && c == '%') v += "%%";
    else v += c;
  }
  if (v.find_first_of(" \t\"'") == std::string::npos && !v.empty()) return v;
  std::string out = "\"";
  for (char c : v) out += c == '"' ? std::string("\\\"") : std::string(1, c);
  return out + "\"";
}

std::string openssh_config(const std::vector<OpenSshHost>& hosts, const std::string& pinned_file) {
  Writer w(pinned_file);
  std::string body;
  for (const auto& h : hosts) {
    const std::string alias = !h.reach->host_key_alias.value.empty() ? h.reach->host_key_alias.value
                              : h.host_key_aliases.empty()            ? std::string()
                                                                      : h.host_key_aliases.front();
    body += w.host(h.alias, *h.reach, alias);
  }
  return "# generated by tpush: each worker as tpush reaches it\n" + body + w.hops();
}

std::string pinned_known_hosts_lines(const std::vector<OpenSshHost>& hosts) {
  std::string out;
  for (const auto& h : hosts)
    if (!h.pinned_host_key.empty()) out += known_hosts_name(h) + " " + h.pinned_host_key + "\n";
  return out;
}

}  // namespace tpush::commands
