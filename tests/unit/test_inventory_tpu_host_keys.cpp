// Host keys from gcloud guest attributes, and the aliases gcloud records them under
// (inventory/tpu_host_keys).
#include <doctest/doctest.h>

#include "test_support.h"
#include "test_tpu_support.h"
#include "tpush/inventory/tpu_host_keys.h"
#include "tpush/util/error.h"

using namespace tpush::inventory;
using tpush::SetupError;
using tpush::test::error_of;
using tpush::test::fixture;
using tpush::test::has;

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
