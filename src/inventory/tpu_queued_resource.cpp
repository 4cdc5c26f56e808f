#include "tpush/inventory/tpu_queued_resource.h"

#include <nlohmann/json.hpp>

#include "tpush/util/error.h"

namespace tpush::inventory {
namespace {

using nlohmann::json;

[[noreturn]] void malformed_qr(const TpuNodeRef& ref, const std::string& why) {
  throw SetupError("malformed gcloud describe output for queued resource " + ref.text() + ": " +
                   why + " (run gcloud compute tpus queued-resources describe " + ref.name +
                   " --zone " + ref.zone + " --format=json to see it)");
}

std::string string_at(const json& j, std::initializer_list<const char*> path) {
  const json* cur = &j;
  for (const char* key : path) {
    if (!cur->is_object()) return "";
    auto it = cur->find(key);
    if (it == cur->end()) return "";
    cur = &*it;
  }
  return cur->is_string() ? cur->get<std::string>() : "";
}

// "projects/P/locations/Z" -> P, Z (either left as is when absent).
void apply_parent(const std::string& parent, TpuNodeRef& ref) {
  const std::string p = "projects/", l = "/locations/";
  if (parent.rfind(p, 0) != 0) return;
  auto loc = parent.find(l, p.size());
  if (loc == std::string::npos) return;
  ref.project = parent.substr(p.size(), loc - p.size());
  std::string zone = parent.substr(loc + l.size());
  if (auto slash = zone.find('/'); slash != std::string::npos) zone.erase(slash);
  if (!zone.empty()) ref.zone = zone;
}

}  // namespace

QueuedResource parse_queued_resource(std::string_view text, const TpuNodeRef& requested) {
  json j = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) malformed_qr(requested, "not valid JSON");
  if (!j.is_object()) malformed_qr(requested, "expected a JSON object");

  QueuedResource qr;
  qr.ref = requested;
  qr.state = string_at(j, {"state", "state"});
  qr.error_message = string_at(j, {"state", "failedData", "error", "message"});
  if (qr.state.empty()) malformed_qr(requested, "no \"state.state\"");

  auto tpu = j.find("tpu");
  if (tpu == j.end() || !tpu->is_object()) {
    if (qr.state != "ACTIVE") return qr;  // the state error says more than "no tpu"
    malformed_qr(requested, "no \"tpu\" (only TPU queued resources are supported)");
  }
  auto specs = tpu->find("nodeSpec");
  if (specs == tpu->end() || !specs->is_array()) malformed_qr(requested, "no \"tpu.nodeSpec\" list");

  for (const json& spec : *specs) {
    if (!spec.is_object()) malformed_qr(requested, "a nodeSpec is not an object");
    TpuNodeRef base = requested;
    apply_parent(string_at(spec, {"parent"}), base);
    std::string node_id = string_at(spec, {"nodeId"});
    if (!node_id.empty()) {
      base.name = node_id;
      qr.nodes.push_back(base);
      continue;
    }
    const json* params = nullptr;
    for (const char* key : {"multisliceParams", "multiNodeParams"}) {
      if (auto it = spec.find(key); it != spec.end() && it->is_object()) params = &*it;
    }
    if (params == nullptr) malformed_qr(requested, "a nodeSpec has neither nodeId nor multisliceParams");
    auto count_it = params->find("nodeCount");
    long long count = 0;
    if (count_it != params->end() && count_it->is_number_integer()) {
      count = count_it->get<long long>();
    } else if (count_it != params->end() && count_it->is_string()) {
      try { count = std::stoll(count_it->get<std::string>()); } catch (const std::exception&) {}
    }
    if (count < 1 || count > 10000) malformed_qr(requested, "multislice nodeCount is missing or invalid");
    std::string prefix = string_at(*params, {"nodeIdPrefix"});
    if (prefix.empty()) prefix = requested.name;
    for (long long i = 0; i < count; ++i) {
      TpuNodeRef ref = base;
      ref.name = prefix + "-" + std::to_string(i);
      qr.nodes.push_back(ref);
    }
  }
  if (qr.nodes.empty() && qr.state == "ACTIVE") malformed_qr(requested, "no TPU nodes in tpu.nodeSpec");
  return qr;
}

void check_queued_resource(const QueuedResource& qr) {
  const std::string& s = qr.state;
  if (s == "ACTIVE") return;
  const std::string thing = "queued resource " + qr.ref.name;
  const std::string describe = "gcloud compute tpus queued-resources describe " + qr.ref.name +
                               " --zone " + qr.ref.zone + " --project " + qr.ref.project;
  if (s == "FAILED") {
    throw SetupError(thing + " is FAILED" +
                     (qr.error_message.empty() ? std::string() : " (" + qr.error_message + ")") +
                     ": delete it and create a new one");
  }
  if (s == "SUSPENDING" || s == "SUSPENDED" || s == "DELETING") {
    throw SetupError(thing + " is " + s + ": its TPUs are gone or going; delete it and create a "
                     "new one");
  }
  // CREATING, ACCEPTED, PROVISIONING, WAITING_FOR_RESOURCES, ...
  throw SetupError(thing + " is " + s + ", not ACTIVE: wait until it is ACTIVE (" + describe + ")");
}

}  // namespace tpush::inventory
