#include "tpush/inventory/tpu_describe.h"

#include <cctype>
#include <nlohmann/json.hpp>
#include <regex>

#include "tpush/util/error.h"

namespace tpush::inventory {
namespace {

using nlohmann::json;

[[noreturn]] void malformed(const TpuNodeRef& ref, const std::string& why) {
  throw SetupError("malformed gcloud describe output for TPU " + ref.text() + ": " + why +
                   " (run gcloud compute tpus tpu-vm describe " + ref.name + " --zone " + ref.zone +
                   " --format=json to see it; --refresh re-describes)");
}

std::string string_field(const json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

// The numeric id exactly as written. nlohmann keeps integers up to 64 bits
// exact; anything it had to store as a double is re-read from the text.
std::string node_id(const json& j, std::string_view text, const TpuNodeRef& ref) {
  auto it = j.find("id");
  if (it == j.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number_unsigned()) return std::to_string(it->get<std::uint64_t>());
  if (it->is_number_integer()) return std::to_string(it->get<std::int64_t>());
  if (it->is_number_float()) {
    static const std::regex raw(R"re("id"\s*:\s*(-?[0-9]+)\s*[,}\n])re");
    std::match_results<std::string_view::const_iterator> m;
    if (std::regex_search(text.begin(), text.end(), m, raw)) return m[1].str();
  }
  malformed(ref, "\"id\" is neither a string nor an integer");
}

bool is_ip_text(const std::string& s) {
  if (s.empty() || s.size() > 45) return false;
  for (char c : s) {
    if (!(std::isxdigit(static_cast<unsigned char>(c)) || c == '.' || c == ':')) return false;
  }
  return true;
}

}  // namespace

TpuNode parse_tpu_node(std::string_view text, const TpuNodeRef& requested) {
  json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) malformed(requested, "not valid JSON");
  if (!j.is_object()) malformed(requested, "expected a JSON object");

  TpuNode node;
  node.ref = requested;
  node.id = node_id(j, text, requested);
  node.state = string_field(j, "state");
  node.health = string_field(j, "health");
  node.accelerator_type = string_field(j, "acceleratorType");
  if (node.state.empty()) malformed(requested, "no \"state\"");

  if (auto nc = j.find("networkConfigs"); nc != j.end() && nc->is_array() && nc->size() > 1) {
    node.nics = static_cast<int>(nc->size());
  }

  auto eps = j.find("networkEndpoints");
  if (eps != j.end() && !eps->is_null()) {
    if (!eps->is_array()) malformed(requested, "\"networkEndpoints\" is not a list");
    if (eps->size() % static_cast<std::size_t>(node.nics) != 0) {
      malformed(requested, std::to_string(eps->size()) + " network endpoints do not divide into " +
                               std::to_string(node.nics) + " NICs per worker");
    }
    for (std::size_t i = 0; i < eps->size(); i += static_cast<std::size_t>(node.nics)) {
      const json& ep = (*eps)[i];
      if (!ep.is_object()) malformed(requested, "a network endpoint is not an object");
      TpuEndpoint e;
      e.internal_ip = string_field(ep, "ipAddress");
      if (auto ac = ep.find("accessConfig"); ac != ep.end() && ac->is_object()) {
        e.external_ip = string_field(*ac, "externalIp");
      }
      if (!is_ip_text(e.internal_ip)) {
        malformed(requested, "network endpoint " + std::to_string(i) + " has no valid ipAddress");
      }
      if (!e.external_ip.empty() && !is_ip_text(e.external_ip)) {
        malformed(requested, "network endpoint " + std::to_string(i) + " has an invalid externalIp");
      }
      node.workers.push_back(std::move(e));
    }
  }
  return node;
}

void check_tpu_node(const TpuNode& node, std::vector<std::string>& warnings) {
  const std::string& s = node.state;
  const std::string thing = "TPU " + node.ref.name;
  const std::string where = " --zone " + node.ref.zone + " --project " + node.ref.project;
  if (s == "STOPPED" || s == "STOPPING") {
    throw SetupError(thing + " is " + s + ": start it with gcloud compute tpus tpu-vm start " +
                     node.ref.name + where);
  }
  if (s == "DELETING") {
    throw SetupError(thing + " is DELETING: it is going away; create a new TPU VM");
  }
  if (s == "HIDDEN") {
    throw SetupError(thing + " is HIDDEN (its capacity was reclaimed): wait until it is READY "
                     "again, or delete and recreate it");
  }
  if (s == "PREEMPTED" || s == "TERMINATED") {
    throw SetupError(thing + " is " + s + ": it cannot be restarted; delete it (gcloud compute tpus "
                     "tpu-vm delete " + node.ref.name + where + ") and create it again");
  }
  if (s != "READY") {
    warnings.push_back(thing + " is " + s + ", not READY: workers may not be reachable yet "
                       "(if connecting fails, try again once it is READY)");
  }
  if (!node.health.empty() && node.health != "HEALTHY" && node.health != "HEALTH_UNSPECIFIED") {
    std::string why = node.health == "UNHEALTHY_MAINTENANCE" ? "it is under maintenance, commands may fail"
                                                             : "commands may fail";
    warnings.push_back(thing + " health is " + node.health + ": " + why);
  }
  if (node.workers.empty()) {
    throw SetupError(thing + " (" + s + ") has no network endpoints, so no workers to connect to" +
                     (s == "READY" ? std::string(": describe it with gcloud compute tpus tpu-vm "
                                                 "describe " + node.ref.name + where)
                                   : std::string(": wait until it is READY")));
  }
}

bool tpu_node_cacheable(const TpuNode& node) {
  return node.state == "READY" && !node.workers.empty();
}

}  // namespace tpush::inventory
