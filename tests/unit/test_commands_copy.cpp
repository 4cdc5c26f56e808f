// Path rules of cp, get and rsync: where things land on the worker and here.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tpush/commands/copy.h"
#include "tpush/output/progress.h"
#include "tpush/ssh/sftp_download.h"
#include "tpush/ssh/sftp_upload.h"
#include "tpush/util/error.h"

namespace fs = std::filesystem;
using namespace tpush::commands;

TEST_CASE("cp: a trailing slash or several sources means into") {
  CHECK(copies_into("/home/me/job/", 1));
  CHECK_FALSE(copies_into("/home/me/job", 1));
  CHECK(copies_into("/home/me/job", 2));
  CHECK(upload_root("config.yaml", "/home/me/job/", true) == "/home/me/job/config.yaml");
  CHECK(upload_root("a/b/config.yaml", "/home/me/job/x.yaml", false) == "/home/me/job/x.yaml");
  CHECK(upload_root("./src/", "job/", true) == "job/src");
  CHECK(upload_root("src", "job/src", false) == "job/src");
  CHECK(upload_root("src", "job/src//", false) == "job/src");
}

TEST_CASE("cp: ~ is the login directory, which SFTP paths are relative to") {
  CHECK(sftp_path("~/job/x") == "job/x");
  CHECK(sftp_path("~") == ".");
  CHECK(sftp_path("~/") == "./");
  CHECK(sftp_path("/abs") == "/abs");
  CHECK(upload_root("f.txt", "~/", true) == "./f.txt");
  CHECK(upload_root("f.txt", "~/job/", true) == "job/f.txt");
}

TEST_CASE("cp -r: trees are planned parents first; directories need -r") {
  const fs::path root = fs::temp_directory_path() / ("tpush-plan-" + std::to_string(::getpid()));
  fs::remove_all(root);
  fs::create_directories(root / "src" / "a" / "b");
  std::ofstream(root / "src" / "top.txt") << "x";
  std::ofstream(root / "src" / "a" / "b" / "deep name.txt") << "y";
  const auto plan = plan_upload({(root / "src").string()}, "/dst/", true);
  std::vector<std::string> remotes;
  for (const auto& p : plan) remotes.push_back(p.remote + (p.directory ? "/" : ""));
  CHECK(remotes == std::vector<std::string>{"/dst/src/", "/dst/src/a/", "/dst/src/top.txt", "/dst/src/a/b/",
                                            "/dst/src/a/b/deep name.txt"});
  CHECK_THROWS_AS(plan_upload({(root / "src").string()}, "/dst/", false), tpush::UsageError);
  CHECK_THROWS_AS(plan_upload({(root / "missing").string()}, "/dst/", false), tpush::UsageError);
  const auto two = plan_upload({(root / "src" / "top.txt").string(), (root / "src" / "a" / "b" / "deep name.txt").string()},
                               "/dst", false);
  REQUIRE(two.size() == 2);
  CHECK(two[0].remote == "/dst/top.txt");
  CHECK(two[1].remote == "/dst/deep name.txt");
  fs::remove_all(root);
}

TEST_CASE("get: every worker's files land in LOCALDIR/<label>/") {
  using tpush::ssh::download_target;
  CHECK(download_target("logs", "w0", "/home/me/job/train.log") == fs::path("logs/w0/train.log"));
  CHECK(download_target("logs", "10.0.0.5:2222", "job/out/") == fs::path("logs/10.0.0.5:2222/out"));
  CHECK(download_target("logs", "a/b", "x") == fs::path("logs/a_b/x"));
  CHECK(download_target("logs", "..", "x") == fs::path("logs/_../x"));
}

TEST_CASE("rsync: the remote side :PATH becomes HOST:PATH") {
  std::vector<std::string> args = {"-a", "--delete", "./src/", ":job/src/"};
  CHECK(rewrite_remote_args(args, "tpush-w3") == 1);
  CHECK(args.back() == "tpush-w3:job/src/");
  std::vector<std::string> local = {"-a", "./x", "./y", ":"};
  CHECK(rewrite_remote_args(local, "h") == 0);
}

TEST_CASE("upload temporary names sit beside the target") {
  const std::string t = tpush::ssh::SftpTransfer::temp_name("/a/b c/f.txt");
  CHECK(t.rfind("/a/b c/f.txt.tpush-tmp-", 0) == 0);
  CHECK(t.size() == std::string("/a/b c/f.txt.tpush-tmp-").size() + 12);
  CHECK(tpush::ssh::remote_parent("/a/b/c") == "/a/b");
  CHECK(tpush::ssh::remote_parent("/a") == "/");
  CHECK(tpush::ssh::remote_parent("a") == "");
  CHECK(tpush::ssh::remote_parent("a/b/") == "a");
}

TEST_CASE("progress line: bytes, workers done, slowest first") {
  tpush::output::Progress p({"w0", "w1", "w2"}, 1000, false);
  p.worker(0).started = p.worker(0).done = true;
  p.worker(0).bytes = 1000;
  p.worker(1).started = true;
  p.worker(1).bytes = 100;
  p.worker(2).started = true;
  p.worker(2).bytes = 500;
  const std::string line = p.line(200);
  CHECK(line == "tpush: 1.6 KiB / 2.9 KiB (53%), 1/3 workers done, slowest: w1 10% w2 50%");
  CHECK(p.line(20).size() == 19);
}
