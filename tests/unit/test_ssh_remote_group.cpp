// The remote command's process group: the prologue a worker's login shell runs
// (checked with the real dash and bash) and the tag line taken out of stderr.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <string_view>

#include "test_support.h"
#include "tpush/ssh/remote_group.h"
#include "tpush/util/shell_quote.h"

namespace {

using tpush::ssh::group_tag;
using tpush::ssh::GroupReport;
using tpush::test::run_shell;

// Feeds `input` to a GroupReport in chunks of `size` bytes; what passes through.
std::string filtered(std::string_view input, std::size_t size, GroupReport& r) {
  std::string out;
  while (!input.empty()) {
    const std::size_t n = std::min(size, input.size());
    out += r.filter(input.substr(0, n));
    input.remove_prefix(n);
  }
  return out + r.flush();
}

}  // namespace

TEST_CASE("remote group: the tag line is taken out of stderr, whatever the chunking") {
  const std::string tag = group_tag() + "4242\n";
  const std::string before = "bash: warning: setlocale: LC_ALL: cannot change locale (xx)\n";
  const std::string after = "the command's own\nstderr, " + group_tag() + "99\nand a tail";
  for (std::size_t size : {1, 2, 7, 64, 4096}) {
    CAPTURE(size);
    GroupReport r;
    CHECK(filtered(before + tag + after, size, r) == before + after);
    REQUIRE(r.pgid());
    CHECK(*r.pgid() == 4242);
  }
}

TEST_CASE("remote group: without a tag every byte passes, and the search ends") {
  std::mt19937 rng(7);
  const std::string noise = tpush::test::random_stream(rng, 5000);
  GroupReport r;
  CHECK(filtered(noise, 13, r) == noise);
  CHECK_FALSE(r.pgid());
  CHECK(r.settled());

  SUBCASE("a line that starts like the tag but is not it") {
    GroupReport s;
    const std::string fake = group_tag() + "12x\n" + group_tag() + "\n" + group_tag().substr(0, 5);
    CHECK(filtered(fake, 3, s) == fake);
    CHECK_FALSE(s.pgid());
  }
  SUBCASE("pid 0 and 1 are never a group to signal") {
    for (const char* pid : {"0", "1"}) {
      GroupReport s;
      CHECK(filtered(group_tag() + pid + "\nrest\n", 4, s) == "rest\n");
      CHECK_FALSE(s.pgid());
    }
  }
  SUBCASE("after 16 other lines the tag is the command's output") {
    GroupReport s;
    std::string lines;
    for (int i = 0; i < 16; ++i) lines += "line\n";
    const std::string late = lines + group_tag() + "77\n";
    CHECK(filtered(late, 5, s) == late);
    CHECK_FALSE(s.pgid());
  }
}

TEST_CASE("remote group: the prologue runs the command unchanged in dash and bash") {
  const std::string command = "echo out; echo err >&2; printf 'a b\\n' | cat; exit 3";
  for (const char* shell : {"/bin/dash", "/bin/bash"}) {
    CAPTURE(shell);
    // stderr into stdout, after the command's stdout lines, to see everything.
    auto r = run_shell(std::string(shell) + " -c " +
                       tpush::util::shell_quote(tpush::ssh::with_group_report(command)) + " 2>&1");
    CHECK(r.status == 3);
    GroupReport g;
    const std::string own = filtered(r.out, 3, g);
    REQUIRE(g.pgid());
    CHECK(*g.pgid() > 1);
    CHECK(own == "out\nerr\na b\n");
  }
}

TEST_CASE("remote group: the stop command signals the group") {
  CHECK(tpush::ssh::group_signal_command(123, "INT") == "kill -s INT -- -123 2>/dev/null");
}
