// The gcloud runner against the stand-in gcloud (a real subprocess).
#include <doctest/doctest.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "test_support.h"
#include "test_tpu_support.h"
#include "tpush/inventory/gcloud.h"
#include "tpush/util/error.h"

using namespace tpush::inventory;
using tpush::SetupError;
using tpush::test::has;

namespace {

const std::vector<std::string> kDescribe = {"compute", "tpus", "tpu-vm", "describe", "v4-32", "--zone",
                                            "us-central2-b", "--project", "tpush-test", "--format=json"};
const GcloudSubject kSubject{"TPU", "v4-32", "tpush-test", {"us-central2-b"}, "--zone"};
constexpr auto kPatient = tpush::test::FakeGcloud::patient;

}  // namespace

TEST_CASE("gcloud: runs with an argument vector and captures stdout") {
  tpush::test::FakeGcloud fake;
  GcloudResult r = run_gcloud(kDescribe, kPatient);
  CHECK(r.ok());
  CHECK(r.exit_code == 0);
  CHECK(has(r.out, "\"acceleratorType\": \"v4-32\""));
  REQUIRE(fake.calls().size() == 1);
  CHECK(fake.calls()[0] ==
        R"(["compute", "tpus", "tpu-vm", "describe", "v4-32", "--zone", "us-central2-b", "--project", "tpush-test", "--format=json"])");
}

TEST_CASE("gcloud: arguments are never interpreted by a shell") {
  tpush::test::FakeGcloud fake;
  run_gcloud({"compute", "tpus", "tpu-vm", "describe", "$(touch /tmp/tpush-pwned); x", "--zone", "z",
              "--project", "p"},
             kPatient);
  CHECK(fake.count_calls("$(touch /tmp/tpush-pwned); x") == 1);
  CHECK_FALSE(std::filesystem::exists("/tmp/tpush-pwned"));
}

TEST_CASE("gcloud: failures map to one-line messages naming the thing and the fix") {
  tpush::test::FakeGcloud fake;
  struct Case { const char* kind; GcloudFailure failure; std::vector<const char*> parts; };
  for (const Case& c : {
           Case{"NOT_FOUND", GcloudFailure::not_found,
                {"TPU v4-32 not found in project tpush-test", "zones tried: us-central2-b, from --zone",
                 "--zone ZONE", "gcloud compute tpus tpu-vm list"}},
           Case{"PERMISSION_DENIED", GcloudFailure::permission_denied,
                {"permission denied reading TPU v4-32", "tpu.nodes.get", "gcloud auth list"}},
           Case{"SERVICE_DISABLED", GcloudFailure::api_disabled,
                {"Cloud TPU API is not enabled in project tpush-test",
                 "gcloud services enable tpu.googleapis.com --project tpush-test"}},
           Case{"NOT_LOGGED_IN", GcloudFailure::not_logged_in, {"not logged in", "gcloud auth login"}},
       }) {
    CAPTURE(c.kind);
    fake.error("describe", c.kind);
    GcloudResult r = run_gcloud(kDescribe, kPatient);
    CHECK_FALSE(r.ok());
    CHECK(r.exit_code == 1);
    CHECK(classify_gcloud_failure(r) == c.failure);
    std::string msg = gcloud_failure_message(r, kSubject);
    for (const char* part : c.parts) CHECK_MESSAGE(has(msg, part), msg);
    CHECK(msg.find('\n') == std::string::npos);
    CHECK_FALSE(has(msg, "authenticated as"));
    CHECK_THROWS_AS(throw_gcloud_failure(r, kSubject), SetupError);
  }
}

TEST_CASE("gcloud: an unknown failure keeps gcloud's first error line and the exit code") {
  tpush::test::FakeGcloud fake;
  fake.write("error/describe", R"({"exit": 2, "stderr": "ERROR: (gcloud.compute.tpus.tpu-vm.describe) Something odd happened.\nmore detail\n"})");
  GcloudResult r = run_gcloud(kDescribe, kPatient);
  CHECK(classify_gcloud_failure(r) == GcloudFailure::other);
  std::string msg = gcloud_failure_message(r, kSubject);
  CHECK(has(msg, "failed (exit 2): Something odd happened."));
  CHECK(has(msg, "gcloud compute tpus tpu-vm describe v4-32"));
}

TEST_CASE("gcloud: a hanging gcloud is killed at the timeout") {
  tpush::test::FakeGcloud fake;
  fake.error("describe", "HANG");
  auto start = std::chrono::steady_clock::now();
  GcloudResult r = run_gcloud(kDescribe, std::chrono::seconds(1));
  auto took = std::chrono::steady_clock::now() - start;
  CHECK(r.timed_out);
  CHECK_FALSE(r.ok());
  CHECK(took < std::chrono::seconds(5));
  std::string msg = gcloud_failure_message(r, kSubject);
  CHECK(has(msg, "timed out after 1s"));
  CHECK(has(msg, "--gcloud-timeout"));
}

TEST_CASE("gcloud: not installed") {
  tpush::test::FakeGcloud fake;
  fake.set("PATH", (fake.dir() / "empty-bin").string());
  std::string msg;
  try {
    run_gcloud(kDescribe, std::chrono::seconds(5));
  } catch (const SetupError& e) {
    msg = e.what();
  }
  CHECK(has(msg, "gcloud not found on PATH"));
  CHECK(has(msg, "install the Google Cloud CLI"));
}

TEST_CASE("gcloud: config get-value, set and unset") {
  tpush::test::FakeGcloud fake;
  CHECK_FALSE(gcloud_config_value("compute/zone", kPatient).has_value());
  fake.config("compute/zone", "europe-west4-a");
  CHECK(gcloud_config_value("compute/zone", kPatient) == "europe-west4-a");
}

TEST_CASE("gcloud: error summary strips the command prefix and account sentence") {
  CHECK(gcloud_error_summary("ERROR: (gcloud.x.y) NOT_FOUND: Resource 'a' was not found. This command is "
                             "authenticated as u@x which is the active account\n- '@type': x\n") ==
        "NOT_FOUND: Resource 'a' was not found.");
  CHECK(gcloud_error_summary("") == "");
  CHECK(gcloud_error_summary("WARNING: something\nERROR: (gcloud) boom\n") == "boom");
}

TEST_CASE("gcloud: error summary drops every credentials sentence gcloud writes, never mid-sentence") {
  // gcloud 528's variants of the sentence after an API error.
  for (const char* sentence :
       {"This command is authenticated as u@example.com which is the active account specified by the "
        "[core/account] property.",
        "This command is authenticated with an access token from /home/u/token specified by the "
        "[auth/access_token_file] property.",
        "This command is unauthenticated because the [auth/disable_credentials] property is True."}) {
    CAPTURE(sentence);
    CHECK(gcloud_error_summary(std::string("ERROR: (gcloud.compute.project-info.describe) PERMISSION_DENIED: "
                                           "Required 'compute.projects.get' permission for 'projects/p'. ") +
                               sentence + "\n- '@type': type.googleapis.com/google.rpc.ErrorInfo\n") ==
          "PERMISSION_DENIED: Required 'compute.projects.get' permission for 'projects/p'.");
  }
  // The Compute API's form: the cause on the line after "Could not fetch resource:".
  GcloudResult compute;
  compute.exit_code = 1;
  compute.err = "ERROR: (gcloud.compute.project-info.describe) Could not fetch resource:\n"
                " - Required 'compute.projects.get' permission for 'projects/p'\n";
  CHECK(gcloud_error_summary(compute.err) ==
        "Could not fetch resource: Required 'compute.projects.get' permission for 'projects/p'");
  CHECK(classify_gcloud_failure(compute) == GcloudFailure::permission_denied);
  // Too long for one line: cut after the last whole sentence that fits.
  const std::string disabled =
      "ERROR: (gcloud.compute.tpus.tpu-vm.describe) PERMISSION_DENIED: Cloud TPU API has not been used in project "
      "123456789012 before or it is disabled. Enable it by visiting https://console.developers.google.com/apis/api/"
      "tpu.googleapis.com/overview?project=123456789012 then retry. If you enabled this API recently, wait a few "
      "minutes for the action to propagate to our systems and retry. This command is authenticated as u@x which is "
      "the active account specified by the [core/account] property.\n";
  CHECK(gcloud_error_summary(disabled) ==
        "PERMISSION_DENIED: Cloud TPU API has not been used in project 123456789012 before or it is disabled. Enable "
        "it by visiting https://console.developers.google.com/apis/api/tpu.googleapis.com/overview?project="
        "123456789012 then retry.");
  // One sentence longer than that: cut after a whole word.
  const std::string words = "ERROR: (gcloud) " + std::string(60, 'a') + " " + std::string(100, 'b') + " " +
                            std::string(100, 'c') + " d";
  CHECK(gcloud_error_summary(words) == std::string(60, 'a') + " " + std::string(100, 'b') + "...");
}

TEST_CASE("gcloud: the child gets our environment plus CLOUDSDK_CORE_DISABLE_PROMPTS=1, no stdin") {
  tpush::test::FakeGcloud fake;
  auto bin = fake.dir() / "bin";
  std::filesystem::create_directories(bin);
  {
    std::ofstream script(bin / "gcloud");
    script << "#!/bin/sh\necho \"$CLOUDSDK_CORE_DISABLE_PROMPTS $TPUSH_TEST_MARK\"\ncat\necho \"$1|$2\"\n";
  }
  std::filesystem::permissions(bin / "gcloud", std::filesystem::perms::owner_all);
  fake.set("PATH", bin.string() + ":/usr/bin:/bin");
  fake.set("TPUSH_TEST_MARK", "marked");
  fake.set("CLOUDSDK_CORE_DISABLE_PROMPTS", "0");
  GcloudResult r = run_gcloud({"a b", "c"}, std::chrono::seconds(10));
  CHECK(r.ok());
  CHECK(r.out == "1 marked\na b|c\n");
}

TEST_CASE("gcloud: an interrupt fd that becomes readable kills gcloud and is left unread") {
  tpush::test::FakeGcloud fake;
  fake.error("describe", "HANG");
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  std::thread ctrl_c([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    CHECK(::write(fds[1], "x", 1) == 1);
  });
  auto start = std::chrono::steady_clock::now();
  CHECK_THROWS_AS(run_gcloud(kDescribe, std::chrono::seconds(60), fds[0]), GcloudInterrupted);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  ctrl_c.join();
  char c = 0;
  CHECK(::read(fds[0], &c, 1) == 1);  // still there for the caller's event loop
  ::close(fds[0]);
  ::close(fds[1]);

  // An idle interrupt fd does not get in the way.
  REQUIRE(::pipe(fds) == 0);
  std::filesystem::remove(fake.fixtures() / "error" / "describe");
  CHECK(run_gcloud(kDescribe, kPatient, fds[0]).ok());
  ::close(fds[0]);
  ::close(fds[1]);
}
