// Path rules of cp, get and rsync: where things land on the worker and here.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tpush/commands/copy/copy.h"
#include "tpush/output/progress.h"
#include "tpush/ssh/sftp/download.h"
#include "tpush/ssh/sftp/upload.h"
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

TEST_CASE("cp -r: trees are planned parents first, directories need -r") {
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

TEST_CASE("rsync: the remote side :PATH becomes HOST:PATH") {
  std::vector<std::string> args = {"-a", "--delete", "./src/", ":job/src/"};
  CHECK(rewrite_remote_args(args, "tpush-w3") == 1);
  CHECK(args.back() == "tpush-w3:job/src/");
  std::vector<std::string> local = {"-a", "./x", "./y", ":"};
  CHECK(rewrite_remote_args(local, "h") == 0);
}
