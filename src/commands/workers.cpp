#include "tpush/commands/workers.h"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

namespace tpush::commands {
namespace {

using nlohmann::json;
using inventory::Worker;
using inventory::WorkerOrigin;

std::string address(const Reach& r) {
  const bool v6 = r.hostname.value.find(':') != std::string::npos;
  return (v6 ? "[" + r.hostname.value + "]" : r.hostname.value) + ":" + std::to_string(r.port.value);
}

const char* mode_name(ssh::HostKeyMode m) {
  switch (m) {
    case ssh::HostKeyMode::yes: return "yes";
    case ssh::HostKeyMode::no: return "no";
    case ssh::HostKeyMode::accept_new: return "accept-new";
  }
  return "?";
}

const char* family_name(int af) { return af == AF_INET ? "inet" : af == AF_INET6 ? "inet6" : "any"; }

const char* via_kind(Reach::Via v) {
  switch (v) {
    case Reach::Via::direct: return "direct";
    case Reach::Via::jump: return "jump";
    case Reach::Via::command: return "command";
  }
  return "?";
}

template <typename T>
json sourced(const Sourced<T>& s) {
  return {{"value", s.value}, {"from", s.from}};
}

json paths(const Sourced<std::vector<std::filesystem::path>>& s) {
  json v = json::array();
  for (const auto& p : s.value) v.push_back(p.string());
  return {{"value", v}, {"from", s.from}};
}

json reach_json(const Reach& r) {
  json keys = json::array();
  for (const auto& f : r.identity_files) keys.push_back({{"value", f.value.string()}, {"from", f.from}});
  json via = {{"kind", via_kind(r.via)}, {"from", r.via_from}};
  if (r.via == Reach::Via::jump) {
    json hops = json::array();
    for (const auto& h : r.jump) hops.push_back(h.name);
    via["jump"] = hops;
  }
  if (r.via == Reach::Via::command) via["proxy_command"] = r.proxy_command.value;
  if (!r.iap_slice.empty()) via["slice"] = r.iap_slice;  // one IAP tunnel carries it; proxy_command if none can
  return {{"hostname", sourced(r.hostname)},
          {"port", sourced(r.port)},
          {"user", sourced(r.user)},
          {"identity_files", keys},
          {"identities_only", sourced(r.identities_only)},
          {"identity_agent", sourced(r.identity_agent)},
          {"via", via},
          {"connect_timeout", sourced(r.connect_timeout)},
          {"alive_interval", sourced(r.alive_interval)},
          {"alive_count", sourced(r.alive_count)},
          {"connection_attempts", sourced(r.connection_attempts)},
          {"address_family", {{"value", family_name(r.address_family.value)}, {"from", r.address_family.from}}},
          {"host_key_check", {{"value", mode_name(r.host_key_check.value)}, {"from", r.host_key_check.from}}},
          {"user_known_hosts_files", paths(r.user_known_hosts)},
          {"global_known_hosts_files", paths(r.global_known_hosts)},
          {"host_key_alias", sourced(r.host_key_alias)}};
}

// The origin in parentheses, when there is one to show.
std::string with_from(const std::string& value, const std::string& from) {
  return from.empty() ? value : value + " (" + from + ")";
}

std::string details_text(const Reach& r) {
  std::string keys;
  for (const auto& f : r.identity_files) keys += (keys.empty() ? "" : ", ") + with_from(f.value.string(), f.from);
  const std::string agent = r.identity_agent.value == "none" ? "none"
                            : r.identity_agent.value.empty() ? "$SSH_AUTH_SOCK"
                                                             : r.identity_agent.value;
  std::string known;
  for (const auto& f : r.user_known_hosts.value) known += (known.empty() ? "" : " ") + f.string();
  std::string out;
  out += "    host " + with_from(r.hostname.value, r.hostname.from) + ", port " +
         with_from(std::to_string(r.port.value), r.port.from) + ", user " + with_from(r.user.value, r.user.from) + "\n";
  out += "    keys " + (keys.empty() ? std::string("none") : keys) + "; agent " +
         with_from(agent, r.identity_agent.from) + (r.identities_only.value ? "; IdentitiesOnly" : "") + "\n";
  out += "    via " + (r.via == Reach::Via::direct ? std::string("direct") : with_from(r.via_text(), r.via_from)) +
         "; connect timeout " + with_from(std::to_string(r.connect_timeout.value) + "s", r.connect_timeout.from) +
         ", keepalive " + with_from(std::to_string(r.alive_interval.value) + "s", r.alive_interval.from) + " x " +
         with_from(std::to_string(r.alive_count.value), r.alive_count.from) + "\n";
  out += "    host keys " + with_from(mode_name(r.host_key_check.value), r.host_key_check.from) + " in " +
         with_from(known.empty() ? "none" : known, r.user_known_hosts.from) +
         (r.host_key_alias.value.empty() ? "" : ", as " + with_from(r.host_key_alias.value, r.host_key_alias.from)) +
         "\n";
  return out;
}

std::string source_text(const WorkerOrigin* o) {
  if (o == nullptr) return "host list";
  std::string where = o->project + "/" + o->zone + "/" + o->tpu;
  if (!o->queued_resource.empty()) {
    where = "queued resource " + o->queued_resource + " slice " + std::to_string(o->slice) + ", " + where;
  }
  return (o->from_cache ? "cache " : "gcloud ") + where;
}

}  // namespace

int print_workers(const std::vector<Worker>& workers, const std::vector<Reach>& reaches,
                  const inventory::TpuResolution* tpu, bool as_json, bool details, std::ostream& out) {
  return print_workers(
      workers, [&](std::size_t i) { return reaches[i]; }, tpu, as_json, details, out);
}

int print_workers(const std::vector<Worker>& workers, const std::function<Reach(std::size_t)>& reach_of,
                  const inventory::TpuResolution* tpu, bool as_json, bool details, std::ostream& out) {
  auto origin = [&](std::size_t i) -> const WorkerOrigin* {
    return tpu != nullptr && i < tpu->origins.size() ? &tpu->origins[i] : nullptr;
  };

  if (as_json) {
    // Streamed, one worker at a time, as nlohmann's dump(2) of the whole array
    // would print it: a million workers need no million JSON objects at once.
    if (workers.empty()) {
      out << "[]\n";
      return 0;
    }
    out << "[\n";
    for (std::size_t i = 0; i < workers.size(); ++i) {
      const Worker& w = workers[i];
      const Reach r = reach_of(i);
      json o = {{"label", w.label},
                {"host", w.target.host},
                {"port", r.port.value},
                {"user", r.user.value},
                {"reach", reach_json(r)},
                {"host_key_aliases", w.host_key_aliases},
                {"pinned_host_key", w.pinned_host_key ? json(*w.pinned_host_key) : json(nullptr)}};
      json env = json::object();
      for (const auto& [k, v] : w.env) env[k] = v;
      o["env"] = env;
      if (const WorkerOrigin* g = origin(i)) {
        o["source"] = g->from_cache ? "cache" : "gcloud";
        o["tpu"] = g->tpu;
        o["project"] = g->project;
        o["zone"] = g->zone;
        o["node_id"] = g->node_id;
        o["worker"] = g->worker;
        o["num_workers"] = g->num_workers;
        o["internal_ip"] = g->internal_ip;
        o["external_ip"] = g->external_ip.empty() ? json(nullptr) : json(g->external_ip);
        o["fetched_at"] = g->fetched_at;
        o["queued_resource"] = g->queued_resource.empty() ? json(nullptr) : json(g->queued_resource);
        o["slice"] = g->slice < 0 ? json(nullptr) : json(g->slice);
        o["instance"] = g->instance.empty() ? json(nullptr) : json(g->instance);
        o["oslogin"] = g->oslogin;
      } else {
        o["source"] = "host list";
      }
      std::string text = o.dump(2);
      out << "  ";
      for (char c : text) {
        out << c;
        if (c == '\n') out << "  ";
      }
      out << (i + 1 < workers.size() ? ",\n" : "\n");
    }
    out << "]\n";
    return 0;
  }

  // The "via" column only when some worker is reached through something.
  bool any_via = false;
  std::vector<std::array<std::string, 5>> rows;
  std::vector<std::string> detail_texts;
  std::array<std::size_t, 5> width{};
  for (std::size_t i = 0; i < workers.size(); ++i) {
    const Reach r = reach_of(i);
    any_via = any_via || r.via != Reach::Via::direct;
    if (details) detail_texts.push_back(details_text(r));
    std::array<std::string, 5> row{workers[i].label, address(r), r.user.value,
                                   r.via == Reach::Via::direct ? "direct" : "via " + r.via_text(), source_text(origin(i))};
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
    rows.push_back(std::move(row));
  }
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::string line;
    for (std::size_t c = 0; c < rows[i].size(); ++c) {
      if (c == 3 && !any_via) continue;
      line += rows[i][c];
      if (c + 1 < rows[i].size()) line += std::string(width[c] - rows[i][c].size() + 2, ' ');
    }
    out << line << "\n";
    if (details) out << detail_texts[i];
  }
  return 0;
}

}  // namespace tpush::commands
