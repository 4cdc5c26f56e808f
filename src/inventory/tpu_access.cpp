#include "tpush/inventory/tpu_access.h"

#include <nlohmann/json.hpp>

#include "tpush/util/error.h"
#include "tpush/util/string.h"

namespace tpush::inventory {
namespace {

using nlohmann::json;

json parse_or_throw(std::string_view text, const std::string& what) {
  json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !(j.is_object() || j.is_array()))
    throw SetupError("malformed gcloud output for " + what + ": not JSON (run the gcloud command by hand to see it)");
  return j;
}

std::optional<bool> truthy(const json& v) {
  if (!v.is_string()) return std::nullopt;
  const std::string s = util::ascii_lowercase(std::string(util::trim(v.get<std::string>())));
  if (s == "true" || s == "1" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "0" || s == "no" || s == "off") return false;
  return std::nullopt;
}

}  // namespace

std::optional<bool> tpu_metadata_oslogin(std::string_view describe_json) {
  const json j = json::parse(describe_json.begin(), describe_json.end(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  auto md = j.find("metadata");
  if (md == j.end() || !md->is_object()) return std::nullopt;
  auto v = md->find("enable-oslogin");
  return v == md->end() ? std::nullopt : truthy(*v);
}

std::optional<bool> project_metadata_oslogin(std::string_view project_info_json) {
  const json j = parse_or_throw(project_info_json, "gcloud compute project-info describe");
  auto md = j.find("commonInstanceMetadata");
  if (md == j.end() || !md->is_object()) return std::nullopt;
  auto items = md->find("items");
  if (items == md->end() || !items->is_array()) return std::nullopt;
  for (const json& item : *items) {
    if (!item.is_object()) continue;
    auto key = item.find("key"), value = item.find("value");
    if (key != item.end() && value != item.end() && key->is_string() && key->get<std::string>() == "enable-oslogin")
      return truthy(*value);
  }
  return std::nullopt;
}

std::string os_login_username(std::string_view profile_json) {
  const json j = parse_or_throw(profile_json, "gcloud compute os-login describe-profile");
  std::optional<std::string> first;
  if (auto accounts = j.find("posixAccounts"); accounts != j.end() && accounts->is_array()) {
    for (const json& a : *accounts) {
      if (!a.is_object()) continue;
      auto name = a.find("username");
      if (name == a.end() || !name->is_string() || name->get<std::string>().empty()) continue;
      auto primary = a.find("primary");
      if (primary != a.end() && primary->is_boolean() && primary->get<bool>()) return name->get<std::string>();
      if (!first) first = name->get<std::string>();
    }
  }
  if (first) return *first;
  throw SetupError(
      "OS Login is on for this TPU, but your OS Login profile has no POSIX account (gcloud compute os-login "
      "describe-profile shows none): log in once with gcloud compute tpus tpu-vm ssh, or give the user with -l");
}

std::map<int, std::string> parse_worker_hostnames(std::string_view guest_attributes_json, const std::string& what) {
  const json j = parse_or_throw(guest_attributes_json, "gcloud get-guest-attributes of " + what);
  std::map<int, std::string> out;
  if (!j.is_array()) return out;
  for (const json& item : j) {
    if (!item.is_object()) continue;
    auto key = item.find("key"), value = item.find("value"), worker = item.find("worker_id");
    if (key == item.end() || value == item.end() || !key->is_string() || !value->is_string()) continue;
    if (key->get<std::string>() != "hostname") continue;
    int w = 0;
    if (worker != item.end()) {
      if (worker->is_number_integer()) w = worker->get<int>();
      else if (worker->is_string()) w = std::atoi(worker->get<std::string>().c_str());
    }
    const std::string name(util::trim(value->get<std::string>()));
    if (!name.empty() && name.find_first_of(" \t\n/'\"") == std::string::npos) out.emplace(w, name);
  }
  return out;
}

std::vector<std::string> iap_tunnel_argv(const std::string& instance, const std::string& zone,
                                         const std::string& project, std::uint16_t port) {
  // In the order gcloud's own `tpu-vm ssh --tunnel-through-iap` writes it.
  return {"gcloud", "compute", "start-iap-tunnel", instance, std::to_string(port), "--listen-on-stdin",
          "--project=" + project, "--zone=" + zone, "--verbosity=warning"};
}

std::string key_propagation_hint(const std::string& tpu, const std::string& zone, const std::string& project,
                                 bool oslogin) {
  if (oslogin)
    return "add your key to your OS Login profile once: gcloud compute os-login ssh-keys add --key-file "
           "~/.ssh/google_compute_engine.pub";
  return "gcloud adds your key to the TPU's metadata on its first ssh; run once: gcloud compute tpus tpu-vm ssh " +
         tpu + " --zone " + zone + " --project " + project + " --worker=all --command=true";
}

}  // namespace tpush::inventory
