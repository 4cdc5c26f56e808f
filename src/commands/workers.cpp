#include "tpush/commands/workers.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "tpush/util/environment.h"

namespace tpush::commands {
namespace {

using nlohmann::json;
using inventory::Worker;
using inventory::WorkerOrigin;

std::string user_of(const Worker& w, const WorkerDefaults& d) {
  if (!w.target.user.empty()) return w.target.user;
  if (!d.user.empty()) return d.user;
  return util::user_name();
}

uint16_t port_of(const Worker& w, const WorkerDefaults& d) {
  return w.target.port != 0 ? w.target.port : (d.port != 0 ? d.port : 22);
}

std::string address(const Worker& w, uint16_t port) {
  bool v6 = w.target.host.find(':') != std::string::npos;
  return (v6 ? "[" + w.target.host + "]" : w.target.host) + ":" + std::to_string(port);
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

int print_workers(const std::vector<Worker>& workers, const inventory::TpuResolution* tpu, bool as_json,
                  std::ostream& out, const WorkerDefaults& defaults) {
  auto origin = [&](std::size_t i) -> const WorkerOrigin* {
    return tpu != nullptr && i < tpu->origins.size() ? &tpu->origins[i] : nullptr;
  };

  if (as_json) {
    json arr = json::array();
    for (std::size_t i = 0; i < workers.size(); ++i) {
      const Worker& w = workers[i];
      json o = {{"label", w.label},
                {"host", w.target.host},
                {"port", port_of(w, defaults)},
                {"user", user_of(w, defaults)},
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
      } else {
        o["source"] = "host list";
      }
      arr.push_back(std::move(o));
    }
    out << arr.dump(2) << "\n";
    return 0;
  }

  std::vector<std::array<std::string, 4>> rows;
  std::array<std::size_t, 4> width{};
  for (std::size_t i = 0; i < workers.size(); ++i) {
    const Worker& w = workers[i];
    std::array<std::string, 4> row{w.label, address(w, port_of(w, defaults)), user_of(w, defaults),
                                   source_text(origin(i))};
    for (std::size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
    rows.push_back(std::move(row));
  }
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size()) line += std::string(width[c] - row[c].size() + 2, ' ');
    }
    out << line << "\n";
  }
  return 0;
}

}  // namespace tpush::commands
