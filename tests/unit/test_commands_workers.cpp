// `tpush workers` printing.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "test_tpu_support.h"
#include "tpush/commands/workers.h"
#include "tpush/inventory/tpu.h"

using namespace tpush::inventory;
using tpush::commands::Options;
using tpush::commands::print_workers;
using tpush::commands::Reach;
using tpush::commands::ReachPlanner;

namespace {

TpuResolution resolve(const tpush::test::FakeGcloud& fake, const std::string& tpu) {
  TpuQuery q;
  q.tpus = {tpu};
  q.zone = "us-central2-b";
  q.project = "tpush-test";
  q.cache_dir = fake.cache();
  return resolve_tpus(q);
}

// How tpush would reach each worker with -l USER -p PORT (0: none) and no ssh_config.
std::vector<Reach> reaches(const std::vector<Worker>& workers, const std::string& user, uint16_t port,
                           const std::string& local_user = "carol") {
  Options o;
  o.user = user;
  o.port = port;
  o.ssh_config_file = "none";
  const ReachPlanner planner(o, "/nonexistent-home", local_user);
  std::vector<Reach> out;
  for (const auto& w : workers) out.push_back(planner.plan(w));
  return out;
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
  CHECK(print_workers(r.workers, reaches(r.workers, "alice", 0), &r, false, false, out) == 0);
  auto l = lines(out.str());
  REQUIRE(l.size() == 64);
  CHECK(l[0] == "w0   35.187.0.10:22  alice  gcloud tpush-test/us-central2-b/v4-512");
  CHECK(l[63].rfind("w63  35.187.0.73:22  alice  gcloud", 0) == 0);

  TpuResolution cached = resolve(fake, "v4-512");
  std::ostringstream out2;
  print_workers(cached.workers, reaches(cached.workers, "alice", 2222), &cached, false, false, out2);
  CHECK(lines(out2.str())[0] == "w0   35.187.0.10:2222  alice  cache tpush-test/us-central2-b/v4-512");
}

TEST_CASE("workers: user@ and :port of the host list, else $USER and 22") {
  Worker w;
  w.label = "127.0.1.5";
  w.target.host = "127.0.1.5";
  Worker v6;
  v6.label = "v6";
  v6.target = {"bob", "::1", 2200, "bob@[::1]:2200"};
  std::ostringstream out;
  print_workers({w, v6}, reaches({w, v6}, "", 0), nullptr, false, false, out);
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
  print_workers(r.workers, reaches(r.workers, "alice", 0), &r, true, false, out);
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
  CHECK(w["reach"]["user"]["value"] == "alice");
  CHECK(w["reach"]["user"]["from"] == "-l");
  CHECK(w["reach"]["port"]["from"] == "default");
  CHECK(w["reach"]["via"]["kind"] == "direct");

  std::ostringstream empty;
  print_workers({}, std::vector<tpush::commands::Reach>{}, nullptr, true, false, empty);
  CHECK(empty.str() == "[]\n");

  // Streamed one worker at a time, byte for byte what dumping the whole array gives.
  std::ostringstream streamed;
  print_workers(r.workers, reaches(r.workers, "alice", 0), &r, true, false, streamed);
  CHECK(streamed.str() == nlohmann::json::parse(streamed.str()).dump(2) + "\n");
}
