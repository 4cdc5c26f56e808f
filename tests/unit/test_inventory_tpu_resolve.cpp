// resolve_tpus end to end against the stand-in gcloud and a scratch cache.
#include <doctest/doctest.h>

#include <fstream>

#include "test_support.h"
#include "test_tpu_support.h"
#include "tpush/inventory/tpu_cache.h"
#include "tpush/inventory/tpu_resolve.h"
#include "tpush/util/error.h"

using namespace tpush::inventory;
using tpush::SetupError;
using tpush::test::error_of;
using tpush::test::has;
using tpush::UsageError;

namespace {

TpuQuery query(const tpush::test::FakeGcloud& fake, std::vector<std::string> tpus) {
  TpuQuery q;
  q.tpus = std::move(tpus);
  q.zone = "us-central2-b";
  q.project = "tpush-test";
  q.cache_dir = fake.cache();
  q.gcloud_timeout = tpush::test::FakeGcloud::patient;  // the test of the timeout sets its own
  return q;
}

std::string env_of(const Worker& w, const std::string& name) {
  for (const auto& [k, v] : w.env) {
    if (k == name) return v;
  }
  return "(unset)";
}

std::filesystem::path cache_file(const tpush::test::FakeGcloud& fake, const std::string& name) {
  return fake.cache() / "tpu/tpush-test/us-central2-b" / (name + ".json");
}

}  // namespace

TEST_CASE("resolve: a 4-worker TPU, then the same from the cache without gcloud") {
  tpush::test::FakeGcloud fake;
  TpuResolution r = resolve_tpus(query(fake, {"v4-32"}));
  REQUIRE(r.workers.size() == 4);
  CHECK_FALSE(r.from_cache);
  CHECK(r.warnings.empty());
  CHECK(r.source == "gcloud describe v4-32 (tpush-test/us-central2-b)");
  const Worker& w0 = r.workers[0];
  CHECK(w0.label == "w0");
  CHECK(w0.target.host == "35.186.0.10");
  CHECK(w0.target.port == 0);
  CHECK(w0.target.user.empty());
  CHECK(env_of(w0, "TPUSH_WORKER") == "0");
  CHECK(env_of(w0, "TPUSH_NUM_WORKERS") == "4");
  CHECK(env_of(w0, "TPUSH_SLICE") == "(unset)");
  CHECK(w0.host_key_aliases == std::vector<std::string>{"tpu.6874917357421523817-0"});
  CHECK_FALSE(w0.pinned_host_key.has_value());
  CHECK(r.workers[3].label == "w3");
  REQUIRE(r.origins.size() == 4);
  CHECK(r.origins[3].internal_ip == "10.130.0.5");
  CHECK(fake.count_calls(R"("tpu-vm", "describe")") == 1);
  CHECK(std::filesystem::exists(cache_file(fake, "v4-32")));

  TpuResolution again = resolve_tpus(query(fake, {"v4-32"}));
  CHECK(again.from_cache);
  CHECK(has(again.source, "cache"));
  CHECK(again.workers.size() == 4);
  CHECK(again.workers[2].target.host == r.workers[2].target.host);
  CHECK(fake.count_calls(R"("tpu-vm", "describe")") == 1);  // no second gcloud call

  auto q = query(fake, {"v4-32"});
  q.refresh = true;
  TpuResolution fresh = resolve_tpus(q);
  CHECK_FALSE(fresh.from_cache);
  CHECK(fake.count_calls(R"("tpu-vm", "describe")") == 2);

  // Writes are atomic: nothing but the entry is left behind.
  std::size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(cache_file(fake, "v4-32").parent_path())) {
    CHECK(e.path().extension() == ".json");
    ++files;
  }
  CHECK(files == 1);
}

TEST_CASE("resolve: --internal-ip, and internal-only TPUs") {
  tpush::test::FakeGcloud fake;
  auto q = query(fake, {"v4-32"});
  q.internal_ip = true;
  CHECK(resolve_tpus(q).workers[1].target.host == "10.130.0.3");
  TpuResolution r = resolve_tpus(query(fake, {"internal-only"}));
  REQUIRE(r.workers.size() == 2);
  CHECK(r.workers[1].target.host == "10.130.0.3");
}

TEST_CASE("resolve: 64 workers and multi-NIC TPUs") {
  tpush::test::FakeGcloud fake;
  TpuResolution r = resolve_tpus(query(fake, {"v4-512"}));
  REQUIRE(r.workers.size() == 64);
  CHECK(r.workers[63].label == "w63");
  CHECK(env_of(r.workers[63], "TPUSH_NUM_WORKERS") == "64");
  CHECK(r.workers[63].host_key_aliases.back() == "tpu.9007199254740993993-63");

  TpuResolution m = resolve_tpus(query(fake, {"v6e-multinic"}));
  REQUIRE(m.workers.size() == 4);
  CHECK(m.workers[3].target.host == "35.186.0.13");
  CHECK(m.origins[3].internal_ip == "10.130.0.5");
}

TEST_CASE("resolve: --worker selections keep gcloud's numbering, bad ones are usage errors") {
  tpush::test::FakeGcloud fake;
  auto q = query(fake, {"v4-32"});
  q.worker_selection = "1,3";
  TpuResolution r = resolve_tpus(q);
  REQUIRE(r.workers.size() == 2);
  CHECK(r.workers[0].label == "w1");
  CHECK(r.workers[1].label == "w3");
  CHECK(env_of(r.workers[1], "TPUSH_WORKER") == "3");
  CHECK(env_of(r.workers[1], "TPUSH_NUM_WORKERS") == "4");

  q.worker_selection = "9";
  std::string msg = error_of<UsageError>([&] { resolve_tpus(q); });
  CHECK(has(msg, "v4-32 has 4 workers"));
  CHECK(has(msg, "0-3"));

  q.worker_selection = "2-1";
  std::size_t calls = fake.calls().size();
  CHECK_THROWS_AS(resolve_tpus(q), UsageError);
  CHECK(fake.calls().size() == calls);  // rejected before any gcloud call
}

TEST_CASE("resolve: zone and project precedence") {
  tpush::test::FakeGcloud fake;
  auto q = query(fake, {"v4-32"});
  q.zone.clear();
  q.project.clear();

  SUBCASE("no zone anywhere is a usage error naming the fixes") {
    fake.set("CLOUDSDK_CORE_PROJECT", "tpush-test");
    std::string msg = error_of<UsageError>([&] { resolve_tpus(q); });
    CHECK(has(msg, "no zone"));
    CHECK(has(msg, "--zone"));
    CHECK(has(msg, "gcloud config set compute/zone"));
  }
  SUBCASE("environment: TPUSH_ZONE before CLOUDSDK_COMPUTE_ZONE; CLOUDSDK_CORE_PROJECT") {
    fake.set("CLOUDSDK_CORE_PROJECT", "tpush-test");
    fake.set("TPUSH_ZONE", "us-central2-b");
    fake.set("CLOUDSDK_COMPUTE_ZONE", "europe-west4-a");
    CHECK(resolve_tpus(q).workers.size() == 4);
    CHECK(fake.count_calls("config") == 0);
  }
  SUBCASE("flags before the environment") {
    fake.set("CLOUDSDK_CORE_PROJECT", "other-project");
    fake.set("TPUSH_ZONE", "europe-west4-a");
    q.zone = "us-central2-b";
    q.project = "tpush-test";
    CHECK(resolve_tpus(q).workers.size() == 4);
  }
  SUBCASE("gcloud config get-value when nothing else is set") {
    fake.config("compute/zone", "us-central2-b");
    fake.config("core/project", "tpush-test");
    TpuResolution r = resolve_tpus(q);
    CHECK(r.workers.size() == 4);
    CHECK(fake.count_calls("\"get-value\", \"compute/zone\"") == 1);
    CHECK(fake.count_calls("\"get-value\", \"core/project\"") == 1);
  }
  SUBCASE("gcloud's configuration file is read directly, without running gcloud") {
    auto dir = fake.dir() / "gcloud-config";
    std::filesystem::create_directories(dir / "configurations");
    std::ofstream(dir / "active_config") << "work\n";
    std::ofstream(dir / "configurations" / "config_work")
        << "[core]\naccount = me@example.com\nproject = tpush-test\n\n[compute]\nzone = us-central2-b\n";
    TpuResolution r = resolve_tpus(q);
    CHECK(r.workers.size() == 4);
    CHECK(fake.count_calls("config") == 0);
  }
  SUBCASE("a full resource name needs neither") {
    q.tpus = {"projects/tpush-test/locations/us-central2-b/nodes/v4-32"};
    CHECK(resolve_tpus(q).workers.size() == 4);
    CHECK(fake.count_calls("config") == 0);
  }
  SUBCASE("a full resource name a million characters long is refused in one short line") {
    q.tpus = {"projects/" + std::string(1000000, 'p') + "/locations/us-central2-b/nodes/v4-32"};
    std::string msg = error_of<UsageError>([&] { resolve_tpus(q); });
    CHECK(has(msg, "invalid project 'pppp"));
    CHECK(has(msg, "(1000000 characters)"));
    CHECK(msg.size() < 200);
    CHECK(fake.count_calls("describe") == 0);
  }
}

TEST_CASE("resolve: several zones are tried in order, not found lists the zones tried") {
  tpush::test::FakeGcloud fake;
  auto q = query(fake, {"v4-32"});
  q.zone = "europe-west4-a,us-central2-b";
  TpuResolution r = resolve_tpus(q);
  CHECK(r.workers.size() == 4);
  CHECK(fake.count_calls(R"("tpu-vm", "describe")") == 2);

  q.tpus = {"nosuchtpu"};
  std::string msg = error_of<SetupError>([&] { resolve_tpus(q); });
  CHECK(has(msg, "TPU nosuchtpu not found in project tpush-test"));
  CHECK(has(msg, "zones tried: europe-west4-a, us-central2-b, from --zone"));
  CHECK(has(msg, "--zone ZONE"));
}

TEST_CASE("resolve: every gcloud error stops resolution with its one-line message") {
  tpush::test::FakeGcloud fake;
  struct Case { const char* kind; const char* part; };
  for (const Case& c : {Case{"PERMISSION_DENIED", "permission denied"},
                        Case{"SERVICE_DISABLED", "gcloud services enable tpu.googleapis.com"},
                        Case{"NOT_LOGGED_IN", "gcloud auth login"}}) {
    CAPTURE(c.kind);
    fake.error("describe", c.kind);
    CHECK(has(error_of<SetupError>([&] { resolve_tpus(query(fake, {"v4-32"})); }), c.part));
  }
  fake.error("describe", "HANG");
  auto q = query(fake, {"v4-32"});
  q.gcloud_timeout = std::chrono::seconds(1);
  CHECK(has(error_of<SetupError>([&] { resolve_tpus(q); }), "timed out after 1s"));

  fake.set("PATH", (fake.dir() / "nothing").string());
  CHECK(has(error_of<SetupError>([&] { resolve_tpus(query(fake, {"v4-32"})); }), "gcloud not found"));
}

TEST_CASE("resolve: malformed JSON, zero endpoints and bad names") {
  tpush::test::FakeGcloud fake;
  CHECK(has(error_of<SetupError>([&] { resolve_tpus(query(fake, {"malformed"})); }), "malformed"));
  CHECK_FALSE(std::filesystem::exists(cache_file(fake, "malformed")));
  CHECK(has(error_of<SetupError>([&] { resolve_tpus(query(fake, {"no-endpoints"})); }), "no network endpoints"));
  CHECK_THROWS_AS(resolve_tpus(query(fake, {"--impersonate-service-account=x"})), UsageError);
  CHECK_THROWS_AS(resolve_tpus(query(fake, {"../etc"})), UsageError);
  auto q = query(fake, {"v4-32"});
  q.zone = "us-central2-b/../x";
  CHECK_THROWS_AS(resolve_tpus(q), UsageError);
  CHECK(fake.count_calls(R"("tpu-vm", "describe")") == 2);  // the usage errors ran no gcloud
}

TEST_CASE("resolve: state classes") {
  tpush::test::FakeGcloud fake;
  TpuResolution r = resolve_tpus(query(fake, {"creating"}));
  REQUIRE(r.warnings.size() == 1);
  CHECK(has(r.warnings[0], "TPU creating is CREATING"));
  CHECK_FALSE(std::filesystem::exists(cache_file(fake, "creating")));  // not READY: not cached
  resolve_tpus(query(fake, {"creating"}));
  CHECK(fake.count_calls("creating") == 2);

  TpuResolution m = resolve_tpus(query(fake, {"maintenance"}));
  REQUIRE(m.warnings.size() == 1);
  CHECK(has(m.warnings[0], "UNHEALTHY_MAINTENANCE"));

  std::string msg = error_of<SetupError>([&] { resolve_tpus(query(fake, {"preempted"})); });
  CHECK(has(msg, "TPU preempted is PREEMPTED"));
  CHECK(has(msg, "create it again"));
}

TEST_CASE("resolve: a changed address is seen after --refresh, a TPU gone bad leaves the cache") {
  tpush::test::FakeGcloud fake;
  auto path = fake.fixtures() / "describe/tpush-test/us-central2-b/v4-32.json";
  std::string original = fake.read(path);
  CHECK(resolve_tpus(query(fake, {"v4-32"})).workers[0].target.host == "35.186.0.10");

  std::string changed = original;
  changed.replace(changed.find("35.186.0.10"), 11, "35.186.9.99");
  fake.write("describe/tpush-test/us-central2-b/v4-32.json", changed);
  TpuResolution cached = resolve_tpus(query(fake, {"v4-32"}));
  CHECK(cached.from_cache);
  CHECK(cached.origins[0].from_cache);
  CHECK(cached.workers[0].target.host == "35.186.0.10");  // stale until re-described
  auto q = query(fake, {"v4-32"});
  q.refresh = true;
  CHECK(resolve_tpus(q).workers[0].target.host == "35.186.9.99");
  CHECK(resolve_tpus(query(fake, {"v4-32"})).workers[0].target.host == "35.186.9.99");  // cache updated

  std::string preempted = changed;
  preempted.replace(preempted.find("\"state\": \"READY\""), 16, "\"state\": \"PREEMPTED\"");
  fake.write("describe/tpush-test/us-central2-b/v4-32.json", preempted);
  CHECK(has(error_of<SetupError>([&] { resolve_tpus(q); }), "PREEMPTED"));
  CHECK_FALSE(std::filesystem::exists(cache_file(fake, "v4-32")));
}

TEST_CASE("resolve: a corrupt cache file is ignored with a warning and replaced") {
  tpush::test::FakeGcloud fake;
  resolve_tpus(query(fake, {"v4-32"}));
  for (const std::string& junk : {std::string("{\"tpush_cache\": 1, \"kind\": \"tpu\", trunc"),
                                  std::string("not json at all"), std::string("")}) {
    CAPTURE(junk);
    std::ofstream(cache_file(fake, "v4-32"), std::ios::trunc) << junk;
    std::size_t before = fake.count_calls(R"("tpu-vm", "describe")");
    TpuResolution r = resolve_tpus(query(fake, {"v4-32"}));
    CHECK_FALSE(r.from_cache);
    CHECK(r.workers.size() == 4);
    REQUIRE(r.warnings.size() == 1);
    CHECK(has(r.warnings[0], "ignoring corrupt cache file"));
    CHECK(fake.count_calls(R"("tpu-vm", "describe")") == before + 1);
    CHECK(resolve_tpus(query(fake, {"v4-32"})).from_cache);  // rewritten, valid again
  }

  // A well-formed entry for another TPU, copied over this one, is not trusted.
  resolve_tpus(query(fake, {"internal-only"}));
  std::filesystem::copy_file(cache_file(fake, "internal-only"), cache_file(fake, "v4-32"),
                             std::filesystem::copy_options::overwrite_existing);
  TpuResolution r = resolve_tpus(query(fake, {"v4-32"}));
  CHECK(r.workers.size() == 4);
  CHECK(has(r.warnings.at(0), "another resource"));

  // Cached describe text that no longer parses is corrupt too.
  TpuCache cache(fake.cache());
  std::vector<std::string> warnings;
  cache.store(TpuCacheKind::tpu, {"tpush-test", "us-central2-b", "v4-32"}, {"{\"state\": ", std::nullopt, "t"},
              warnings);
  r = resolve_tpus(query(fake, {"v4-32"}));
  CHECK(r.workers.size() == 4);
  CHECK(has(r.warnings.at(0), "ignoring corrupt cache file"));
}

TEST_CASE("resolve: a multislice queued resource of 2 slices") {
  tpush::test::FakeGcloud fake;
  TpuQuery q = query(fake, {});
  q.queued_resources = {"ms-qr"};
  TpuResolution r = resolve_tpus(q);
  REQUIRE(r.workers.size() == 8);
  CHECK(r.workers[0].label == "s0w0");
  CHECK(r.workers[7].label == "s1w3");
  CHECK(r.workers[5].target.host == "35.188.1.11");
  CHECK(env_of(r.workers[5], "TPUSH_SLICE") == "1");
  CHECK(env_of(r.workers[5], "TPUSH_NUM_SLICES") == "2");
  CHECK(env_of(r.workers[5], "TPUSH_WORKER") == "1");
  CHECK(env_of(r.workers[5], "TPUSH_NUM_WORKERS") == "4");
  CHECK(r.origins[5].queued_resource == "ms-qr");
  CHECK(r.origins[5].tpu == "ms-qr-1");
  CHECK(r.workers[5].host_key_aliases.back() == "tpu.8000000000000000001-1");
  CHECK(fake.count_calls("queued-resources") == 1);
  CHECK(fake.count_calls("\"describe\", \"ms-qr-") == 2);

  std::size_t calls = fake.calls().size();
  TpuResolution again = resolve_tpus(q);
  CHECK(again.from_cache);
  CHECK(again.workers.size() == 8);
  CHECK(fake.calls().size() == calls);

  q.worker_selection = "0";
  TpuResolution sel = resolve_tpus(q);
  REQUIRE(sel.workers.size() == 2);
  CHECK(sel.workers[1].label == "s1w0");

  q.worker_selection = "all";
  q.queued_resources = {"noprefix-qr"};
  CHECK(resolve_tpus(q).origins.at(7).tpu == "noprefix-qr-1");
}

TEST_CASE("resolve: a queued resource not ACTIVE fails with its state") {
  tpush::test::FakeGcloud fake;
  TpuQuery q = query(fake, {});
  q.queued_resources = {"waiting-qr"};
  CHECK(has(error_of<SetupError>([&] { resolve_tpus(q); }), "WAITING_FOR_RESOURCES"));
  q.queued_resources = {"failed-qr"};
  CHECK(has(error_of<SetupError>([&] { resolve_tpus(q); }), "no more capacity"));
  q.queued_resources = {"missing-qr"};
  CHECK(has(error_of<SetupError>([&] { resolve_tpus(q); }), "queued resource missing-qr not found"));
  CHECK(fake.count_calls("\"describe\", \"failed-qr-") == 0);
}

TEST_CASE("resolve: several TPUs get name-prefixed labels") {
  tpush::test::FakeGcloud fake;
  TpuQuery q = query(fake, {"v4-32,internal-only", "v4-32"});
  q.queued_resources = {"ms-qr"};
  TpuResolution r = resolve_tpus(q);
  REQUIRE(r.workers.size() == 4 + 2 + 8);
  CHECK(r.workers[0].label == "v4-32/w0");
  CHECK(r.workers[4].label == "internal-only/w0");
  CHECK(r.workers[6].label == "ms-qr/s0w0");
  CHECK(has(r.source, "gcloud describe (4 TPUs)"));
}

TEST_CASE("resolve: --fetch-host-keys pins ssh-ed25519 keys from guest attributes") {
  tpush::test::FakeGcloud fake;
  auto q = query(fake, {"v4-32"});
  q.fetch_host_keys = true;
  TpuResolution r = resolve_tpus(q);
  REQUIRE(r.workers.size() == 4);
  for (const Worker& w : r.workers) {
    REQUIRE(w.pinned_host_key.has_value());
    CHECK(w.pinned_host_key->rfind("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5", 0) == 0);
    REQUIRE(w.host_key_aliases.size() == 2);
    CHECK(w.host_key_aliases[0] ==
          w.host_key_aliases[1] + "-" + w.pinned_host_key->substr(w.pinned_host_key->size() - 6));
  }
  CHECK(r.workers[0].pinned_host_key != r.workers[1].pinned_host_key);
  CHECK(fake.count_calls("get-guest-attributes") == 1);

  // Cached with the keys: no gcloud call at all next time.
  std::size_t calls = fake.calls().size();
  TpuResolution again = resolve_tpus(q);
  CHECK(again.from_cache);
  CHECK(again.workers[3].pinned_host_key == r.workers[3].pinned_host_key);
  CHECK(fake.calls().size() == calls);

  // Without the option the known key still gives gcloud's suffixed alias, but nothing is pinned.
  q.fetch_host_keys = false;
  TpuResolution plain = resolve_tpus(q);
  CHECK_FALSE(plain.workers[0].pinned_host_key.has_value());
  CHECK(plain.workers[0].host_key_aliases.size() == 2);

  // A TPU without guest attributes: an error naming the fix.
  auto q2 = query(fake, {"internal-only"});
  q2.fetch_host_keys = true;
  CHECK(has(error_of<SetupError>([&] { resolve_tpus(q2); }), "not found"));
  fake.write("guest-attributes/tpush-test/us-central2-b/internal-only.json", "[]\n");
  CHECK(has(error_of<SetupError>([&] { resolve_tpus(q2); }), "drop --fetch-host-keys"));
}
