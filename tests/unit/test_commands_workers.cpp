// `tpush workers` printing.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "test_tpu_support.h"
#include "tpush/commands/workers.h"
#include "tpush/inventory/tpu.h"

using namespace tpush::inventory;
using tpush::commands::print_workers;
using tpush::commands::WorkerDefaults;

namespace {

TpuResolution resolve(const tpush::test::FakeGcloud& fake, const std::string& tpu) {
  TpuQuery q;
  q.tpus = {tpu};
  q.zone = "us-central2-b";
  q.project = "tpush-test";
  q.cache_dir = fake.cache();
  return resolve_tpus(q);
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

}  // namespace

TEST_CASE("workers: one aligned line per worker with address, user and source") {
  tpush::test::FakeGcloud fake;
  TpuResolution r = resolve(fake, "v4-512");
  std::ostringstream out;
  CHECK(print_workers(r.workers, &r, false, out, WorkerDefaults{"alice", 22}) == 0);
  auto l = lines(out.str());
  REQUIRE(l.size() == 64);
  CHECK(l[0] == "w0   35.187.0.10:22  alice  gcloud tpush-test/us-central2-b/v4-512");
  CHECK(l[63].rfind("w63  35.187.0.73:22  alice  gcloud", 0) == 0);

  TpuResolution cached = resolve(fake, "v4-512");
  std::ostringstream out2;
  print_workers(cached.workers, &cached, false, out2, WorkerDefaults{"alice", 2222});
  CHECK(lines(out2.str())[0] == "w0   35.187.0.10:2222  alice  cache tpush-test/us-central2-b/v4-512");
}

TEST_CASE("workers: explicit user/port win; $USER is the last default; plain host lists") {
  Worker w;
  w.label = "127.0.1.5";
  w.target.host = "127.0.1.5";
  Worker v6;
  v6.label = "v6";
  v6.target = {"bob", "::1", 2200, "bob@[::1]:2200"};
  tpush::test::FakeGcloud fake;
  fake.set("USER", "carol");
  std::ostringstream out;
  print_workers({w, v6}, nullptr, false, out);
  auto l = lines(out.str());
  REQUIRE(l.size() == 2);
  CHECK(l[0] == "127.0.1.5  127.0.1.5:22  carol  host list");
  CHECK(l[1] == "v6         [::1]:2200    bob    host list");
}

TEST_CASE("workers --json: an array with addresses, origin, env and host key aliases") {
  tpush::test::FakeGcloud fake;
  TpuQuery q;
  q.queued_resources = {"ms-qr"};
  q.zone = "us-central2-b";
  q.project = "tpush-test";
  q.cache_dir = fake.cache();
  TpuResolution r = resolve_tpus(q);
  std::ostringstream out;
  print_workers(r.workers, &r, true, out, WorkerDefaults{"alice", 22});
  auto j = nlohmann::json::parse(out.str());
  REQUIRE(j.is_array());
  REQUIRE(j.size() == 8);
  const auto& w = j[5];
  CHECK(w["label"] == "s1w1");
  CHECK(w["host"] == "35.188.1.11");
  CHECK(w["port"] == 22);
  CHECK(w["user"] == "alice");
  CHECK(w["source"] == "gcloud");
  CHECK(w["tpu"] == "ms-qr-1");
  CHECK(w["queued_resource"] == "ms-qr");
  CHECK(w["slice"] == 1);
  CHECK(w["worker"] == 1);
  CHECK(w["num_workers"] == 4);
  CHECK(w["node_id"] == "8000000000000000001");
  CHECK(w["internal_ip"] == "10.130.2.3");
  CHECK(w["env"]["TPUSH_SLICE"] == "1");
  CHECK(w["host_key_aliases"][0] == "tpu.8000000000000000001-1");
  CHECK(w["pinned_host_key"].is_null());

  std::ostringstream empty;
  print_workers({}, nullptr, true, empty);
  CHECK(empty.str() == "[]\n");
}
