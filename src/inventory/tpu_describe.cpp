#include "tpush/inventory/tpu_describe.h"

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

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

// The digits of the first `"id": NUMBER` in the text, followed by blanks holding a
// newline or by `,` or `}` (what the regex "id"\s*:\s*(-?[0-9]+)\s*[,}\n] finds).
// Read by hand: std::regex recursed once per character, and a long run of blanks or
// digits overflowed the stack.
std::optional<std::string> raw_id(std::string_view text) {
  constexpr std::string_view blanks = " \t\n\r\v\f";
  const auto skip_blanks = [&](std::string_view& s) {
    const std::size_t n = std::min(s.find_first_not_of(blanks), s.size());
    const std::string_view skipped = s.substr(0, n);
    s.remove_prefix(n);
    return skipped;
  };
  for (auto at = text.find("\"id\""); at != std::string_view::npos; at = text.find("\"id\"", at + 1)) {
    std::string_view rest = text.substr(at + 4);
    skip_blanks(rest);
    if (!rest.starts_with(':')) continue;
    rest.remove_prefix(1);
    skip_blanks(rest);
    const std::size_t sign = rest.starts_with('-') ? 1 : 0;
    const std::size_t end = std::min(rest.find_first_not_of("0123456789", sign), rest.size());
    if (end == sign) continue;
    std::string_view after = rest.substr(end);
    const bool newline = skip_blanks(after).find('\n') != std::string_view::npos;
    if (newline || after.starts_with(',') || after.starts_with('}')) return std::string(rest.substr(0, end));
  }
  return std::nullopt;
}

// The numeric id exactly as written. nlohmann keeps integers up to 64 bits
// exact; anything it had to store as a double is re-read from the text.
std::string node_id(const json& j, std::string_view text, const TpuNodeRef& ref) {
  auto it = j.find("id");
  if (it == j.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number_unsigned()) return std::to_string(it->get<std::uint64_t>());
  if (it->is_number_integer()) return std::to_string(it->get<std::int64_t>());
  if (it->is_number_float())
    if (auto digits = raw_id(text)) return *digits;
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
