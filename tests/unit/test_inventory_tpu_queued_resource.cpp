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


TEST_CASE("queued resource: multislice expands nodeIdPrefix-0..N-1 with parent project/zone") {
  QueuedResource qr = parse_queued_resource(fixture("queued-resources", "ms-qr"), test_node("ms-qr"));
  CHECK(qr.state == "ACTIVE");
  REQUIRE(qr.nodes.size() == 2);
  CHECK(qr.nodes[0] == TpuNodeRef{"tpush-test", "us-central2-b", "ms-qr-0"});
  CHECK(qr.nodes[1].name == "ms-qr-1");
  check_queued_resource(qr);

  QueuedResource np = parse_queued_resource(fixture("queued-resources", "noprefix-qr"), test_node("noprefix-qr"));
  REQUIRE(np.nodes.size() == 2);
  CHECK(np.nodes[1].name == "noprefix-qr-1");

  QueuedResource single = parse_queued_resource(fixture("queued-resources", "single-qr"), test_node("single-qr"));
  REQUIRE(single.nodes.size() == 1);
  CHECK(single.nodes[0].name == "v4-32");

  std::string multinode = R"({"state": {"state": "ACTIVE"}, "tpu": {"nodeSpec": [
    {"multiNodeParams": {"nodeCount": 3, "nodeIdPrefix": "mn"}, "parent": "projects/p2/locations/europe-west4-a"}]}})";
  QueuedResource mn = parse_queued_resource(multinode, test_node("q"));
  REQUIRE(mn.nodes.size() == 3);
  CHECK(mn.nodes[2] == TpuNodeRef{"p2", "europe-west4-a", "mn-2"});
}

TEST_CASE("queued resource: not ACTIVE fails with its state and failure message") {
  QueuedResource w = parse_queued_resource(fixture("queued-resources", "waiting-qr"), test_node("waiting-qr"));
  std::string msg = error_of([&] { check_queued_resource(w); });
  CHECK(has(msg, "queued resource waiting-qr is WAITING_FOR_RESOURCES"));
  CHECK(has(msg, "wait until it is ACTIVE"));

  QueuedResource f = parse_queued_resource(fixture("queued-resources", "failed-qr"), test_node("failed-qr"));
  msg = error_of([&] { check_queued_resource(f); });
  CHECK(has(msg, "is FAILED"));
  CHECK(has(msg, "There is no more capacity in the zone"));
  CHECK(msg.find('\n') == std::string::npos);
}
