#include "tpush/inventory/host_groups.h"

#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

#include "test_support.h"
#include "tpush/inventory/host_list.h"
#include "tpush/util/error.h"

namespace {

using tpush::UsageError;
using tpush::test::error_of;
using tpush::inventory::expand_host_list;
using tpush::inventory::HostGroups;
using tpush::inventory::HostListOptions;

std::string parse_error(const std::string& text) {
  return error_of<UsageError>([&] { HostGroups(text, "groups"); });
}

}  // namespace

TEST_CASE("host groups: ClusterShell's flat groups file") {
  // The shape of ClusterShell's own groups.d/local.cfg.
  const HostGroups groups(
      "# ClusterShell groups config local.cfg\n"
      "#\n"
      "adm: example0\n"
      "oss: example4 example5\n"
      "mds: example6\n"
      "io: example[4-6]\n"
      "\n"
      "compute: example[32-159]   # the big ones\n"
      "gpu: example[156-159]\n"
      "all: example[4-6,32-159]\n"
      "empty:\n"
      "esc%test: x1\r\n",
      "local.cfg");
  CHECK(groups.names() == std::vector<std::string>{"adm", "oss", "mds", "io", "compute", "gpu", "all",
                                                   "empty", "esc%test"});
  const auto oss = groups.find("", "oss");
  REQUIRE(oss);
  CHECK(oss->expression == "example4 example5");
  CHECK(oss->where == "local.cfg:4");
  CHECK(groups.find("", "compute")->expression == "example[32-159]");
  CHECK(groups.find("", "empty")->expression.empty());
  CHECK(groups.find("", "esc%test")->expression == "x1");
  CHECK_FALSE(groups.find("", "nope"));
  CHECK_FALSE(groups.find("", "#"));
  // The file is the source "local" unless told otherwise.
  CHECK(groups.find("local", "adm"));
  CHECK_FALSE(groups.find("other", "adm"));
  CHECK(HostGroups("a: b\n", "f", "site").find("site", "a"));
  CHECK(groups.origin() == "groups file 'local.cfg' (source 'local')");

  const HostListOptions options{&groups, {}};
  CHECK(expand_host_list("@oss", options).size() == 2);
  CHECK(expand_host_list("@*", options).size() == 131);
  CHECK(expand_host_list("@empty", options).empty());
}

TEST_CASE("host groups: a name on several lines means all of them") {
  const HostGroups groups("a: n1\nb: m1\na: n2\na:\na: n3,n4\n", "g");
  CHECK(groups.names() == std::vector<std::string>{"a", "b"});
  CHECK(groups.find("", "a")->expression == "n1,n2,n3,n4");
  CHECK(groups.find("", "a")->where == "g:1");
}

TEST_CASE("host groups: malformed lines name the file and line") {
  CHECK(parse_error("a: n1\nnot a group line\n") ==
        "groups:2: 'not a group line' is not a group line (write NAME: HOSTS, like 'rack1: "
        "node[01-16]', with NAME at the start of the line)");
  CHECK(parse_error(": n1").rfind("groups:1: ': n1' is not a group line", 0) == 0);
  // ClusterShell's YAML files are not this format.
  CHECK(parse_error("local:\n  adm: example0\n").rfind("groups:2: 'adm: example0' is not a group line", 0) ==
        0);
  CHECK(parse_error("rack 1: n1").rfind("groups:1: group name 'rack 1' cannot hold blanks", 0) == 0);
  CHECK(parse_error("r@ck: n1").find("group name 'r@ck'") != std::string::npos);
  CHECK(parse_error("r[1]: n1").find("group name 'r[1]'") != std::string::npos);
  CHECK(parse_error("bell\a: n1").find("group name 'bell\\x07'") != std::string::npos);
  for (const char* bad : {"x", "a b: c", "\tindented: x"}) {
    const auto message = parse_error(bad);
    CHECK(message.find('\n') == std::string::npos);
    CHECK(message.find('\t') == std::string::npos);
  }
}

TEST_CASE("host groups: reading a file") {
  tpush::test::TempDir dir;
  const auto file = dir / "groups";
  std::ofstream(file) << "rack1: n[01-16]\nall: @rack1,login\n";
  const auto groups = HostGroups::read(file);
  CHECK(groups.find("", "rack1")->where == file.string() + ":1");
  CHECK(expand_host_list("@rack1!n[02-16]", HostListOptions{&groups, {}}).at(0).host == "n01");

  CHECK(error_of<UsageError>([&] { HostGroups::read(dir / "nope"); }) ==
        "cannot read groups file '" + (dir / "nope").string() + "': No such file or directory");
  CHECK(error_of<UsageError>([&] { HostGroups::read(dir.path()); }).find("Is a directory") != std::string::npos);
}

TEST_CASE("host groups: a file name with control characters is escaped in messages") {
  CHECK(parse_error("x").rfind("groups:1: ", 0) == 0);
  const std::string message = error_of<UsageError>([] { HostGroups("not a group\n", "odd\tname"); });
  CHECK(message.rfind("odd\\tname:1: ", 0) == 0);
  const HostGroups groups("a: n[3-1]\n", "odd\x1bname");
  CHECK(error_of<UsageError>([&] { expand_host_list("@a", HostListOptions{&groups, {}}); })
            .rfind("odd\\x1bname:1: bad host list 'n[3-1]'", 0) == 0);
}
