// `tpush workers` printing.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "test_support.h"
#include "test_tpu_support.h"
#include "tpush/commands/plan/workers.h"
#include "tpush/inventory/inventory.h"
#include "tpush/inventory/tpu_resolve.h"

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

TEST_CASE("workers: planned one after another, the same bytes as each worker planned alone") {
  // ReachPlanner plans once for every host ssh_config treats alike and hands
  // out copies (ReachScratch); a planner of its own for each worker never does.
  tpush::test::TempDir home;
  const std::string config = home.write("config",
                                        "Host bastion\n  HostName gw.example.com\n  User ops\n  Port 2222\n"
                                        "Host web* !web7\n  User deploy\n  IdentityFile ~/.ssh/web\n"
                                        "Host tok*\n  IdentityFile ~/.ssh/id_%h\n"
                                        "Host named*\n  HostName fixed.example.com\n"
                                        "Host jump*\n  ProxyJump bastion\n"
                                        "Host pc*\n  ProxyCommand nc %h %p\n"
                                        "Match originalhost db* user root\n  ConnectTimeout 7\n"
                                        "Host *\n  ServerAliveInterval 30\n  UserKnownHostsFile ~/.ssh/kh\n")
                                 .string();
  Options o;
  o.ssh_config_file = config;
  std::vector<Worker> workers = workers_from_host_lists(
      {"web[1-12],tok[1-3],named[1-3],jump[1-4],pc[1-2],db[1-3],root@db[4-5],db6:2200,other[1-3],web[13-14]"}, {},
      {});
  // A worker reached through IAP in the middle of others like it.
  workers[2].iap =
      std::make_shared<const IapWorker>(IapWorker{"inst-2", "us-central2-b", "proj", "proj/us-central2-b/tpu"});
  std::vector<Reach> alone;
  for (const Worker& w : workers) alone.push_back(ReachPlanner(o, home.path(), "carol").plan(w));
  const ReachPlanner planner(o, home.path(), "carol");
  const auto plan = [&](std::size_t i, tpush::commands::ReachScratch& s) { planner.plan(workers[i], s); };
  for (const bool json : {false, true})
    for (const bool details : {false, true}) {
      std::ostringstream one_by_one, shared;
      print_workers(workers, alone, nullptr, json, details, one_by_one);
      print_workers(workers, plan, nullptr, json, details, shared);
      CHECK(shared.str() == one_by_one.str());
      if (json) CHECK(shared.str() == nlohmann::json::parse(shared.str()).dump(2) + "\n");
    }
  std::ostringstream text;
  print_workers(workers, plan, nullptr, false, false, text);
  const auto l = lines(text.str());
  REQUIRE(l.size() == workers.size());
  CHECK(l[0].find("web1:22") != std::string::npos);
  CHECK(l[0].find("deploy") != std::string::npos);
  CHECK(l[2].find("one IAP tunnel") != std::string::npos);
  CHECK(l[3].find("web4:22") != std::string::npos);
  CHECK(l[3].find("direct") != std::string::npos);
}

TEST_CASE("workers --json: names and values that need escaping, as nlohmann writes them") {
  Worker w;
  w.label = "nöde \"1\"";
  w.target.host = "h1";
  w.env = {{"B", "tab\there"}, {"A", "ctl\x01 \\"}, {"B", "last one wins"}, {"é", "ünï"}};
  w.host_key_aliases = {"tpu.1-0", "tpu.1-0-abc"};
  w.pinned_host_key = "ssh-ed25519 AAAA";
  const auto rs = reaches({w}, "", 0);
  std::ostringstream out;
  print_workers({w}, rs, nullptr, true, false, out);
  CHECK(out.str() == nlohmann::json::parse(out.str()).dump(2) + "\n");
  const auto j = nlohmann::json::parse(out.str());
  CHECK(j[0]["env"]["B"] == "last one wins");
  CHECK(j[0]["env"]["A"] == "ctl\x01 \\");
  CHECK(j[0]["label"] == "nöde \"1\"");

  // Text nlohmann refuses (not UTF-8) is refused as before.
  w.env = {{"bad", "\xff"}};
  std::ostringstream refused;
  CHECK_THROWS_AS(print_workers({w}, reaches({w}, "", 0), nullptr, true, false, refused), nlohmann::json::type_error);
}
