#include "tpush/inventory/tpu_host_keys.h"

#include <cctype>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tpush/util/error.h"

namespace tpush::inventory {
namespace {

using nlohmann::json;

bool is_base64(const std::string& s) {
  if (s.size() < 16 || s.size() % 4 != 0) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '/' || c == '=')) return false;
  }
  return true;
}

// Like gcloud: keep the first whitespace-delimited token (a newline in a guest
// attribute must not smuggle a second known_hosts entry). Accept "type base64" too.
std::optional<std::string> key_blob(const std::string& value) {
  std::istringstream in(value);
  std::string first, second;
  in >> first >> second;
  if (first == "ssh-ed25519") first = second;
  if (!is_base64(first)) return std::nullopt;
  return first;
}

std::optional<int> worker_number(const json& v) {
  if (v.is_number_integer()) return v.get<int>();
  if (v.is_string()) {
    try {
      std::size_t used = 0;
      int n = std::stoi(v.get<std::string>(), &used);
      if (used == v.get<std::string>().size()) return n;
    } catch (const std::exception&) {
    }
  }
  return std::nullopt;
}

void take(std::map<int, std::string>& out, int worker, const json& item) {
  if (!item.is_object()) return;
  auto ns = item.find("namespace"), key = item.find("key"), value = item.find("value");
  if (ns == item.end() || key == item.end() || value == item.end()) return;
  if (!ns->is_string() || !key->is_string() || !value->is_string()) return;
  if (ns->get<std::string>() != "hostkeys" || key->get<std::string>() != "ssh-ed25519") return;
  if (auto blob = key_blob(value->get<std::string>())) out.emplace(worker, *blob);
}

}  // namespace

std::map<int, std::string> parse_ed25519_host_keys(std::string_view text, const std::string& what) {
  json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !(j.is_array() || j.is_object())) {
    throw SetupError("malformed gcloud get-guest-attributes output for " + what +
                     ": not a JSON list (drop --fetch-host-keys to connect without pinned keys)");
  }
  std::map<int, std::string> out;
  if (j.is_array()) {
    for (const json& item : j) {
      if (!item.is_object()) continue;
      auto w = item.find("worker_id");
      std::optional<int> worker = w == item.end() ? std::optional<int>(0) : worker_number(*w);
      if (worker) take(out, *worker, item);
    }
  } else if (auto ga = j.find("guestAttributes"); ga != j.end() && ga->is_array()) {
    for (std::size_t i = 0; i < ga->size(); ++i) {
      const json& entry = (*ga)[i];
      if (!entry.is_object()) continue;
      auto qv = entry.find("queryValue");
      if (qv == entry.end() || !qv->is_object()) continue;
      auto items = qv->find("items");
      if (items == qv->end() || !items->is_array()) continue;
      for (const json& item : *items) take(out, static_cast<int>(i), item);
    }
  }
  return out;
}

std::vector<std::string> tpu_host_key_aliases(const std::string& node_id, int worker,
                                              const std::optional<std::string>& ed25519_base64) {
  std::vector<std::string> out;
  if (node_id.empty()) return out;
  std::string base = "tpu." + node_id + "-" + std::to_string(worker);
  if (ed25519_base64 && ed25519_base64->size() >= 6) {
    out.push_back(base + "-" + ed25519_base64->substr(ed25519_base64->size() - 6));
  }
  out.push_back(base);
  return out;
}

}  // namespace tpush::inventory
