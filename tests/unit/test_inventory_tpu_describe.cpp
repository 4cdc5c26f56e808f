#include <doctest/doctest.h>

#include "test_support.h"
#include "test_tpu_support.h"
#include "tpush/inventory/tpu_describe.h"
#include "tpush/inventory/tpu_host_keys.h"
#include "tpush/inventory/tpu_queued_resource.h"
#include "tpush/util/error.h"

using namespace tpush::inventory;
using tpush::SetupError;
using tpush::test::error_of;
using tpush::test::fixture;
using tpush::test::test_node;
using tpush::test::has;


TEST_CASE("describe: a 4-worker TPU with external and internal addresses") {
  TpuNode n = parse_tpu_node(fixture("describe", "v4-32"), test_node("v4-32"));
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
  TpuNode n = parse_tpu_node(fixture("describe", "v4-512"), test_node("v4-512"));
  CHECK(n.workers.size() == 64);
  CHECK(n.id == "9007199254740993993");  // a double would give ...994048
  CHECK(n.workers[63].internal_ip == "10.130.0.65");
}

TEST_CASE("describe: ids as strings, integers, and integers too big for 64 bits") {
  auto with_id = [](const std::string& id) {
    return R"({"id": )" + id + R"(, "state": "READY", "networkEndpoints": [{"ipAddress": "10.0.0.2"}]})";
  };
  CHECK(parse_tpu_node(with_id("\"123\""), test_node("x")).id == "123");
  CHECK(parse_tpu_node(with_id("18446744073709551615"), test_node("x")).id == "18446744073709551615");
  CHECK(parse_tpu_node(with_id("123456789012345678901234"), test_node("x")).id == "123456789012345678901234");
  CHECK_THROWS_AS(parse_tpu_node(with_id("[1]"), test_node("x")), SetupError);
  // Found with the gcloud_json fuzz target (a hand-made input): a long run of blanks
  // around a too-big id overflowed std::regex's stack. The id is read by hand now.
  const std::string blanks(300'000, ' ');
  const std::string spaced = R"({"id")" + blanks + ": 123456789012345678901234" + blanks +
                             R"(, "state": "READY", "networkEndpoints": [{"ipAddress": "10.0.0.2"}]})";
  CHECK(parse_tpu_node(spaced, test_node("x")).id == "123456789012345678901234");
  CHECK(parse_tpu_node(with_id("-123456789012345678901234"), test_node("x")).id == "-123456789012345678901234");
  // The first "id" that is followed by a number counts, as the regex found it.
  const std::string nested = R"({"labels": {"id": "a"}, "id": 123456789012345678901234
, "state": "READY", "networkEndpoints": [{"ipAddress": "10.0.0.2"}]})";
  CHECK(parse_tpu_node(nested, test_node("x")).id == "123456789012345678901234");
}

TEST_CASE("describe: internal-only TPU has no external address") {
  TpuNode n = parse_tpu_node(fixture("describe", "internal-only"), test_node("internal-only"));
  REQUIRE(n.workers.size() == 2);
  CHECK(n.workers[1].external_ip.empty());
  CHECK(n.workers[1].internal_ip == "10.130.0.3");
}

TEST_CASE("describe: multi-NIC endpoints are interleaved, worker w is entry w*k") {
  TpuNode n = parse_tpu_node(fixture("describe", "v6e-multinic"), test_node("v6e-multinic"));
  CHECK(n.nics == 2);
  REQUIRE(n.workers.size() == 4);
  for (int w = 0; w < 4; ++w) {
    CHECK(n.workers[static_cast<std::size_t>(w)].internal_ip == "10.130.0." + std::to_string(2 + w));
    CHECK(n.workers[static_cast<std::size_t>(w)].external_ip == "35.186.0." + std::to_string(10 + w));
  }
  // An endpoint count that does not divide by the NIC count is malformed.
  std::string bad = R"({"id": "1", "state": "READY", "networkConfigs": [{}, {}],
    "networkEndpoints": [{"ipAddress": "10.0.0.2"}, {"ipAddress": "10.1.0.2"}, {"ipAddress": "10.0.0.3"}]})";
  CHECK_THROWS_AS(parse_tpu_node(bad, test_node("x")), SetupError);
}

TEST_CASE("describe: transitional states warn and proceed") {
  for (const char* s : {"creating", "starting", "repairing", "restarting", "reimaging"}) {
    CAPTURE(s);
    TpuNode n = parse_tpu_node(fixture("describe", s), test_node(s));
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
    TpuNode n = parse_tpu_node(fixture("describe", c.name), test_node(c.name));
    std::vector<std::string> warnings;
    std::string msg = error_of([&] { check_tpu_node(n, warnings); });
    CHECK(has(msg, std::string("TPU ") + c.name + " "));
    CHECK(has(msg, c.state));
    CHECK(has(msg, c.fix));
  }
}

TEST_CASE("describe: UNHEALTHY_MAINTENANCE warns") {
  TpuNode n = parse_tpu_node(fixture("describe", "maintenance"), test_node("maintenance"));
  std::vector<std::string> warnings;
  check_tpu_node(n, warnings);
  REQUIRE(warnings.size() == 1);
  CHECK(has(warnings[0], "UNHEALTHY_MAINTENANCE"));
}

TEST_CASE("describe: zero endpoints and malformed JSON are errors") {
  TpuNode n = parse_tpu_node(fixture("describe", "no-endpoints"), test_node("no-endpoints"));
  std::vector<std::string> warnings;
  CHECK(has(error_of([&] { check_tpu_node(n, warnings); }), "no network endpoints"));
  std::string msg = error_of([] { parse_tpu_node(fixture("describe", "malformed"), test_node("malformed")); });
  CHECK(has(msg, "malformed gcloud describe output for TPU malformed"));
  CHECK(has(error_of([] { parse_tpu_node("[]", test_node("x")); }), "expected a JSON object"));
  CHECK(has(error_of([] { parse_tpu_node(R"({"state": "READY", "networkEndpoints": [{"ipAddress": "a;b"}]})", test_node("x")); }),
            "no valid ipAddress"));
}
