// OS Login, IAP instance names and the key hint from gcloud's JSON (inventory/tpu_access).
#include <doctest/doctest.h>

#include "tpush/inventory/tpu_access.h"
#include "tpush/util/error.h"

using namespace tpush::inventory;

TEST_CASE("tpu access: enable-oslogin in the TPU's and the project's metadata") {
  CHECK(tpu_metadata_oslogin(R"({"metadata": {"enable-oslogin": "TRUE"}})") == true);
  CHECK(tpu_metadata_oslogin(R"({"metadata": {"enable-oslogin": "false"}})") == false);
  CHECK_FALSE(tpu_metadata_oslogin(R"({"metadata": {"other": "x"}})").has_value());
  CHECK_FALSE(tpu_metadata_oslogin(R"({"name": "x"})").has_value());
  CHECK(project_metadata_oslogin(
            R"({"commonInstanceMetadata": {"items": [{"key": "a", "value": "b"}, {"key": "enable-oslogin", "value": "True"}]}})") ==
        true);
  CHECK_FALSE(project_metadata_oslogin(R"({"commonInstanceMetadata": {"kind": "compute#metadata"}})").has_value());
  CHECK_THROWS_AS(project_metadata_oslogin("not json"), tpush::SetupError);
}

TEST_CASE("tpu access: the OS Login user is the primary POSIX account's name") {
  CHECK(os_login_username(R"({"posixAccounts": [{"username": "a", "primary": false}, {"username": "b", "primary": true}]})") ==
        "b");
  CHECK(os_login_username(R"({"posixAccounts": [{"username": "only"}]})") == "only");
  CHECK_THROWS_WITH_AS(os_login_username(R"({"name": "1"})"), doctest::Contains("-l"), tpush::SetupError);
}

TEST_CASE("tpu access: each worker's instance name, whatever the namespace") {
  const auto names = parse_worker_hostnames(
      R"([{"key": "hostname", "value": "t1v-n-1-w-0", "worker_id": 0},
          {"key": "hostname", "namespace": "x", "value": "t1v-n-1-w-1", "worker_id": "1"},
          {"key": "ssh-ed25519", "namespace": "hostkeys", "value": "AAAA", "worker_id": 1},
          {"key": "hostname", "value": "bad name; rm -rf", "worker_id": 2}])",
      "TPU x");
  CHECK(names.size() == 2);
  CHECK(names.at(0) == "t1v-n-1-w-0");
  CHECK(names.at(1) == "t1v-n-1-w-1");
}

TEST_CASE("tpu access: the IAP tunnel as gcloud writes it, and the key hint") {
  CHECK(iap_tunnel_argv("t1v-n-1-w-3", "us-central2-b", "p") ==
        std::vector<std::string>{"gcloud", "compute", "start-iap-tunnel", "t1v-n-1-w-3", "22", "--listen-on-stdin",
                                 "--project=p", "--zone=us-central2-b", "--verbosity=warning"});
  CHECK(key_propagation_hint("pod", "z", "p", false).find("tpu-vm ssh pod --zone z --project p --worker=all") !=
        std::string::npos);
  CHECK(key_propagation_hint("pod", "z", "p", true).find("os-login ssh-keys add") != std::string::npos);
}
