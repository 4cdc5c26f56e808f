// What is particular to hosts files (hosts_file.h): lines, FILE:LINE, #include
// and cycles. The lists on the lines are test_inventory_host_list.cpp's.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "test_support.h"
#include "tpush/inventory/hosts_file.h"
#include "tpush/util/error.h"

namespace {

using tpush::UsageError;
using tpush::inventory::for_each_hosts_line;
using tpush::inventory::HostsFileChain;
using tpush::inventory::include_target;
using tpush::inventory::is_include_line;
using tpush::inventory::read_list_file;
using tpush::inventory::without_comment;
using tpush::test::error_of;
using tpush::test::TempDir;
namespace fs = std::filesystem;

std::vector<std::string> hosts_lines(std::string_view text) {
  std::vector<std::string> out;
  for_each_hosts_line(text, "f", [&](std::string_view line) { out.emplace_back(line); });
  return out;
}

}  // namespace

TEST_CASE("hosts file: each line, the last without a newline too") {
  CHECK(hosts_lines("a\n\nb c\r\nd") == std::vector<std::string>{"a", "", "b c\r", "d"});
  CHECK(hosts_lines("").empty());
  CHECK(hosts_lines("a\n") == std::vector<std::string>{"a"});
}

TEST_CASE("hosts file: errors name FILE:LINE, and a NUL even in a comment is one") {
  const auto thrown = error_of<UsageError>([] {
    for_each_hosts_line("a\nb\n", "hosts", [](std::string_view line) {
      if (line == "b") throw UsageError("bad b");
    });
  });
  CHECK(thrown == "hosts:2: bad b");
  CHECK(error_of<UsageError>([] { hosts_lines(std::string_view("a # \0 x\n", 8)); }).rfind("f:1: ", 0) == 0);
  CHECK(error_of<UsageError>([] { hosts_lines("ok\na\x01\n"); }).rfind("f:2: ", 0) == 0);
  CHECK(hosts_lines("a # \x01 in a comment\n").size() == 1);  // comments are not checked but for NULs
}

TEST_CASE("hosts file: comments start an item, inside a name '#' is part of it") {
  CHECK(without_comment("a,b # c") == "a,b ");
  CHECK(without_comment("# all") == "");
  CHECK(without_comment("a,#b") == "a,");
  CHECK(without_comment("gpu-#4,x") == "gpu-#4,x");
}

TEST_CASE("hosts file: #include in the first column, relative to the including file") {
  CHECK(is_include_line("#include x"));
  CHECK(is_include_line("#include\tx"));
  CHECK(is_include_line("#include"));
  CHECK_FALSE(is_include_line("#included x"));
  CHECK_FALSE(is_include_line(" #include x"));
  CHECK(include_target("#include x", "/etc/tpush") == fs::path("/etc/tpush/x"));
  CHECK(include_target("#include  /abs/x  ", "/etc/tpush") == fs::path("/abs/x"));
  CHECK(include_target("#include ./x", "/etc/tpush") == fs::path("./x"));
  CHECK(include_target("#include ../x", "/etc/tpush") == fs::path("../x"));
  CHECK(error_of<UsageError>([] { include_target("#include", "/"); }).find("#include takes one file name") !=
        std::string::npos);
  CHECK(error_of<UsageError>([] { include_target("#include a b", "/"); }).find("#include takes one file name") !=
        std::string::npos);
}

TEST_CASE("hosts file: a file that includes itself is refused, naming the cycle") {
  TempDir dir;
  const auto a = dir.write("a", ""), b = dir.write("b", "");
  HostsFileChain chain;
  chain.enter(a);
  chain.enter(b);
  const auto cycle = error_of<UsageError>([&] { chain.enter(dir.path() / "." / "a"); });
  CHECK(cycle.find("includes itself") != std::string::npos);
  CHECK(cycle.find(a.string() + " -> " + b.string() + " -> ") != std::string::npos);
  chain.leave();
  chain.leave();
  chain.enter(a);  // read once more, after it was read: no cycle
}

TEST_CASE("hosts file: read_list_file reads everything or says why not") {
  TempDir dir;
  const std::string big(100000, 'x');
  CHECK(read_list_file(dir.write("big", big), "hosts file") == big);
  CHECK(error_of<UsageError>([&] { read_list_file(dir / "none", "groups file"); }) ==
        "cannot read groups file '" + (dir / "none").string() + "': No such file or directory");
}
