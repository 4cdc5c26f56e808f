#include <doctest/doctest.h>

#include <fstream>
#include <functional>
#include <sstream>

#include "test_tpu_support.h"
#include "tpush/inventory/tpu_describe.h"
#include "tpush/inventory/tpu_host_keys.h"
#include "tpush/inventory/tpu_queued_resource.h"
#include "tpush/util/error.h"

using namespace tpush::inventory;
using tpush::SetupError;

namespace {

std::string fixture(const std::string& kind, const std::string& name) {
  auto path = tpush::test::source_root() / "tests/fixtures/gcloud" / kind / "tpush-test/us-central2-b" /
              (name + ".json");
  std::ifstream in(path);
  REQUIRE(in);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TpuNodeRef ref(const std::string& name) { return {"tpush-test", "us-central2-b", name}; }

std::string message_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no exception)";
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("describe: a 4-worker TPU with external and internal addresses") {
  TpuNode n = parse_tpu_node(fixture("describe", "v4-32"), ref("v4-32"));
  CHECK(n.id == "6874917357421523817");
  CHECK(n.state == "READY");
  CHECK(n.health == "HEALTHY");
  CHECK(n.accelerator_type == "v4-32");
  CHECK(n.nics == 1);
  REQUIRE(n.workers.size() == 4);
  CHECK(n.workers[0].internal_ip == "10.130.0.2");
  CHECK(n.workers[0].external_ip == "35.186.0.10");
  CHECK(n.workers[3].internal_ip == "10.130.0.5");
  std::vector<std::string> warnings;
  check_tpu_node(n, warnings);
  CHECK(warnings.empty());
  CHECK(tpu_node_cacheable(n));
}

TEST_CASE("describe: 64 workers, an integer id above 2^53 kept exactly") {
  TpuNode n = parse_tpu_node(fixture("describe", "v4-512"), ref("v4-512"));
  CHECK(n.workers.size() == 64);
  CHECK(n.id == "9007199254740993993");  // a double would give ...994048
  CHECK(n.workers[63].internal_ip == "10.130.0.65");
}

TEST_CASE("describe: ids as strings, integers, and integers too big for 64 bits") {
  auto with_id = [](const std::string& id) {
    return R"({"id": )" + id + R"(, "state": "READY", "networkEndpoints": [{"ipAddress": "10.0.0.2"}]})";
  };
  CHECK(parse_tpu_node(with_id("\"123\""), ref("x")).id == "123");
  CHECK(parse_tpu_node(with_id("18446744073709551615"), ref("x")).id == "18446744073709551615");
  CHECK(parse_tpu_node(with_id("123456789012345678901234"), ref("x")).id == "123456789012345678901234");
  CHECK_THROWS_AS(parse_tpu_node(with_id("[1]"), ref("x")), SetupError);
}

TEST_CASE("describe: internal-only TPU has no external address") {
  TpuNode n = parse_tpu_node(fixture("describe", "internal-only"), ref("internal-only"));
  REQUIRE(n.workers.size() == 2);
  CHECK(n.workers[1].external_ip.empty());
  CHECK(n.workers[1].internal_ip == "10.130.0.3");
}

TEST_CASE("describe: multi-NIC endpoints are interleaved, worker w is entry w*k") {
  TpuNode n = parse_tpu_node(fixture("describe", "v6e-multinic"), ref("v6e-multinic"));
  CHECK(n.nics == 2);
  REQUIRE(n.workers.size() == 4);
  for (int w = 0; w < 4; ++w) {
    CHECK(n.workers[static_cast<std::size_t>(w)].internal_ip == "10.130.0." + std::to_string(2 + w));
    CHECK(n.workers[static_cast<std::size_t>(w)].external_ip == "35.186.0." + std::to_string(10 + w));
  }
  // An endpoint count that does not divide by the NIC count is malformed.
  std::string bad = R"({"id": "1", "state": "READY", "networkConfigs": [{}, {}],
    "networkEndpoints": [{"ipAddress": "10.0.0.2"}, {"ipAddress": "10.1.0.2"}, {"ipAddress": "10.0.0.3"}]})";
  CHECK_THROWS_AS(parse_tpu_node(bad, ref("x")), SetupError);
}

TEST_CASE("describe: transitional states warn and proceed") {
  for (const char* s : {"creating", "starting", "repairing", "restarting", "reimaging"}) {
    CAPTURE(s);
    TpuNode n = parse_tpu_node(fixture("describe", s), ref(s));
    std::vector<std::string> warnings;
    check_tpu_node(n, warnings);
    REQUIRE(warnings.size() == 1);
    CHECK(has(warnings[0], "not READY"));
    CHECK_FALSE(tpu_node_cacheable(n));
  }
}

TEST_CASE("describe: unusable states fail with the state and what to do") {
  struct Case { const char* name; const char* state; const char* fix; };
  for (const Case& c : {Case{"stopped", "STOPPED", "tpu-vm start stopped"},
                        Case{"stopping", "STOPPING", "tpu-vm start stopping"},
                        Case{"deleting", "DELETING", "create a new"},
                        Case{"hidden", "HIDDEN", "recreate"},
                        Case{"preempted", "PREEMPTED", "delete it"},
                        Case{"terminated", "TERMINATED", "create it again"}}) {
    CAPTURE(c.name);
    TpuNode n = parse_tpu_node(fixture("describe", c.name), ref(c.name));
    std::vector<std::string> warnings;
    std::string msg = message_of([&] { check_tpu_node(n, warnings); });
    CHECK(has(msg, std::string("TPU ") + c.name + " "));
    CHECK(has(msg, c.state));
    CHECK(has(msg, c.fix));
  }
}

TEST_CASE("describe: UNHEALTHY_MAINTENANCE warns") {
  TpuNode n = parse_tpu_node(fixture("describe", "maintenance"), ref("maintenance"));
  std::vector<std::string> warnings;
  check_tpu_node(n, warnings);
  REQUIRE(warnings.size() == 1);
  CHECK(has(warnings[0], "UNHEALTHY_MAINTENANCE"));
}

TEST_CASE("describe: zero endpoints and malformed JSON are errors") {
  TpuNode n = parse_tpu_node(fixture("describe", "no-endpoints"), ref("no-endpoints"));
  std::vector<std::string> warnings;
  CHECK(has(message_of([&] { check_tpu_node(n, warnings); }), "no network endpoints"));
  std::string msg = message_of([] { parse_tpu_node(fixture("describe", "malformed"), ref("malformed")); });
  CHECK(has(msg, "malformed gcloud describe output for TPU malformed"));
  CHECK(has(message_of([] { parse_tpu_node("[]", ref("x")); }), "expected a JSON object"));
  CHECK(has(message_of([] { parse_tpu_node(R"({"state": "READY", "networkEndpoints": [{"ipAddress": "a;b"}]})", ref("x")); }),
            "no valid ipAddress"));
}

TEST_CASE("queued resource: multislice expands nodeIdPrefix-0..N-1 with parent project/zone") {
  QueuedResource qr = parse_queued_resource(fixture("queued-resources", "ms-qr"), ref("ms-qr"));
  CHECK(qr.state == "ACTIVE");
  REQUIRE(qr.nodes.size() == 2);
  CHECK(qr.nodes[0] == TpuNodeRef{"tpush-test", "us-central2-b", "ms-qr-0"});
  CHECK(qr.nodes[1].name == "ms-qr-1");
  check_queued_resource(qr);

  QueuedResource np = parse_queued_resource(fixture("queued-resources", "noprefix-qr"), ref("noprefix-qr"));
  REQUIRE(np.nodes.size() == 2);
  CHECK(np.nodes[1].name == "noprefix-qr-1");

  QueuedResource single = parse_queued_resource(fixture("queued-resources", "single-qr"), ref("single-qr"));
  REQUIRE(single.nodes.size() == 1);
  CHECK(single.nodes[0].name == "v4-32");

  std::string multinode = R"({"state": {"state": "ACTIVE"}, "tpu": {"nodeSpec": [
    {"multiNodeParams": {"nodeCount": 3, "nodeIdPrefix": "mn"}, "parent": "projects/p2/locations/europe-west4-a"}]}})";
  QueuedResource mn = parse_queued_resource(multinode, ref("q"));
  REQUIRE(mn.nodes.size() == 3);
  CHECK(mn.nodes[2] == TpuNodeRef{"p2", "europe-west4-a", "mn-2"});
}

TEST_CASE("queued resource: not ACTIVE fails with its state and failure message") {
  QueuedResource w = parse_queued_resource(fixture("queued-resources", "waiting-qr"), ref("waiting-qr"));
  std::string msg = message_of([&] { check_queued_resource(w); });
  CHECK(has(msg, "queued resource waiting-qr is WAITING_FOR_RESOURCES"));
  CHECK(has(msg, "wait until it is ACTIVE"));

  QueuedResource f = parse_queued_resource(fixture("queued-resources", "failed-qr"), ref("failed-qr"));
  msg = message_of([&] { check_queued_resource(f); });
  CHECK(has(msg, "is FAILED"));
  CHECK(has(msg, "There is no more capacity in the zone"));
  CHECK(msg.find('\n') == std::string::npos);
}

TEST_CASE("guest attributes: ssh-ed25519 host keys per worker, aliases as gcloud writes them") {
  auto keys = parse_ed25519_host_keys(fixture("guest-attributes", "v4-32"), "TPU v4-32");
  REQUIRE(keys.size() == 4);
  CHECK(keys.at(0).rfind("AAAAC3NzaC1lZDI1NTE5AAAAI", 0) == 0);

  auto aliases = tpu_host_key_aliases("6874917357421523817", 2, keys.at(2));
  REQUIRE(aliases.size() == 2);
  CHECK(aliases[0] == "tpu.6874917357421523817-2-" + keys.at(2).substr(keys.at(2).size() - 6));
  CHECK(aliases[1] == "tpu.6874917357421523817-2");
  CHECK(tpu_host_key_aliases("42", 0, std::nullopt) == std::vector<std::string>{"tpu.42-0"});

  // The API's own shape, "type base64" values, junk that is not base64, a newline trick.
  std::string api = R"({"guestAttributes": [
    {"queryPath": "hostkeys/", "queryValue": {"items": [
      {"key": "ssh-ed25519", "namespace": "hostkeys", "value": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl"}]}},
    {"queryPath": "hostkeys/", "queryValue": {"items": [
      {"key": "ssh-ed25519", "namespace": "hostkeys", "value": "not base64!"}]}},
    {"queryPath": "hostkeys/", "queryValue": {"items": [
      {"key": "ssh-ed25519", "namespace": "hostkeys", "value": "AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n@revoked * ssh-rsa AAAA"}]}}]})";
  auto k2 = parse_ed25519_host_keys(api, "x");
  CHECK(k2.size() == 2);
  CHECK(k2.at(0) == "AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl");
  CHECK(k2.count(1) == 0);
  CHECK(k2.at(2) == k2.at(0));
  CHECK_THROWS_AS(parse_ed25519_host_keys("{", "x"), SetupError);
}
