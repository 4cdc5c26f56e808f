// The remote command's process group: the prologue a worker's login shell runs
// (checked with the real dash and bash) and the tag line taken out of stderr.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
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
  std::string out = tpush::test::in_chunks(input, size, [&](std::string_view c) { return r.filter(c); });
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

// The login shells a worker may have: Debian's sh, bash, and busybox's userland.
constexpr const char* kShells[] = {"/bin/dash", "/bin/bash", "/bin/busybox sh"};

TEST_CASE("remote group: the prologue runs the command unchanged, whatever the watch and the shell") {
  const std::string command = "echo out; echo err >&2; printf 'a b\\n' | cat; exit 3";
  for (auto watch : {tpush::ssh::HangUpWatch::stdin, tpush::ssh::HangUpWatch::per_command}) {
    for (const char* shell : kShells) {
      CAPTURE(shell);
      CAPTURE(static_cast<int>(watch));
      // stderr into stdout, after the command's stdout lines, to see everything.
      auto r = run_shell(std::string(shell) + " -c " +
                         tpush::util::shell_quote(tpush::ssh::with_group_report(command, watch)) + " 2>&1");
      CHECK(r.status == 3);
      GroupReport g;
      const std::string own = filtered(r.out, 3, g);
      REQUIRE(g.pgid());
      CHECK(*g.pgid() > 1);
      CHECK(own == "out\nerr\na b\n");
    }
  }
}

TEST_CASE("remote group: the stop command signals the group") {
  CHECK(tpush::ssh::group_signal_command(123, "INT") == "kill -s INT -- -123 2>/dev/null");
}

namespace {

// Runs `script` in `shell` as a kept session's login shell would (in a session
// of its own), under an outer sh that stands for the sshd session process (the
// guardian watches it).
std::string under_connection(const tpush::test::TempDir& dir, const char* shell, const std::string& script,
                             const std::string& after = "", const std::string& before = "",
                             tpush::ssh::HangUpWatch watch = tpush::ssh::HangUpWatch::per_connection) {
  const std::string prologue = tpush::ssh::with_group_report(script, watch);
  return "XDG_RUNTIME_DIR=" + dir.path().string() + " /bin/sh -c " +
         tpush::util::shell_quote(before + "setsid " + std::string(shell) + " -c \"$1\" " + after + "; s=$?; exit $s") + " sh " +
         tpush::util::shell_quote(prologue) + " 2>&1";
}

}  // namespace

TEST_CASE("remote group: a kept session's prologue runs the command unchanged and leaves no variable") {
  const tpush::test::TempDir dir;  // XDG_RUNTIME_DIR: the guardians' directories
  const std::string command = "echo out; echo \"[$tpush_d$tpush_g$tpush_s]\" >&2; exit 3";
  for (const char* shell : {"/bin/dash", "/bin/bash"}) {
    CAPTURE(shell);
    auto r = run_shell(under_connection(dir, shell, command));
    CHECK(r.status == 3);
    GroupReport g;
    CHECK(filtered(r.out, 7, g) == "out\n[]\n");
    REQUIRE(g.pgid());
    CHECK(*g.pgid() > 1);
  }
}

TEST_CASE("remote group: the guardian hangs up a command whose connection ended, and cleans up") {
  const tpush::test::TempDir dir;  // XDG_RUNTIME_DIR: the guardians' directories
  for (const char* shell : {"/bin/dash", "/bin/bash"}) {
    CAPTURE(shell);
    // The connection (outer sh) ends once the command has registered; the command
    // would print "survived" after 30 s if the hang-up never came. run_shell
    // returns when the last holder of the output pipe is gone.
    auto r = run_shell(under_connection(
        dir, shell, "sleep 30; echo survived",
        "& while [ ! -e \"$XDG_RUNTIME_DIR/tpush-guard-$$/$!\" ]; do sleep 0.02; done; exit 0 #"));
    CHECK(r.out.find("survived") == std::string::npos);
    // The guardian removes its directory as it leaves.
    for (int i = 0; i < 200 && !std::filesystem::is_empty(dir.path()); ++i) ::usleep(50'000);
    CHECK(std::filesystem::is_empty(dir.path()));
  }
}

TEST_CASE("remote group: a fresh session's watchdog hangs up a command whose connection ended, and only then") {
  const tpush::test::TempDir dir;
  const std::string started = (dir / "started").string();
  for (const char* shell : {"/bin/dash", "/bin/bash"}) {
    CAPTURE(shell);
    std::filesystem::remove(started);
    // The connection (outer sh) ends once the command runs; the command would
    // print "survived" after 30 s if the hang-up never came.
    auto r = run_shell(under_connection(
        dir, shell, "touch '" + started + "'; sleep 30; echo survived",
        "& while [ ! -e '" + started + "' ]; do sleep 0.02; done; exit 0 #", "",
        tpush::ssh::HangUpWatch::per_command));
    CHECK(r.out.find("survived") == std::string::npos);
    // A command that ends first is left to end as it does: its status, no hang-up.
    r = run_shell(under_connection(dir, shell, "sleep 0.2; echo done; exit 4", "", "",
                                   tpush::ssh::HangUpWatch::per_command));
    CHECK(r.status == 4);
    GroupReport g;
    CHECK(filtered(r.out, 5, g) == "done\n");
  }
}

TEST_CASE("remote group: the watchdog ends with the command, while the connection stays") {
  // A cut network: the command ends (a relay's script hears nothing and quits)
  // and sshd waits on, for hours; nothing of the watchdog may stay with it.
  const tpush::test::TempDir dir;
  for (const char* shell : {"/bin/dash", "/bin/bash"}) {
    CAPTURE(shell);
    auto r = run_shell(under_connection(
        dir, shell, "echo done",
        // Still there after 10 s of looking is lingering. (No second look after
        // the loop: a watchdog the login shell forked but that had not yet become
        // `sh -c ... __tpush_helper__` at the first look, on a loaded machine,
        // would show there for the moment it lives.)
        "; i=0; while pgrep -f \"__tpush_helper__ [0-9]+ $$\\$\" >/dev/null; do "
        "[ $i -ge 200 ] && { echo lingering; break; }; sleep 0.05; i=$((i + 1)); done; "
        "exit 0 #", "", tpush::ssh::HangUpWatch::per_command));
    CHECK(r.out.find("lingering") == std::string::npos);
    CHECK(r.out.find("done") != std::string::npos);
  }
}

namespace {

// Runs `script` in `shell` as a fresh session's login shell runs behind the
// watch on stdin: in a session of its own, its stdin a pipe whose writer (a
// `sleep`, in sshd's place) stays until `after` ends it. No PATH: the watch
// needs nothing but the shell (no tail, no setpriv).
std::string under_stdin_watch(const tpush::test::TempDir& dir, const char* shell, const std::string& script,
                              const std::string& after) {
  const std::string prologue = tpush::ssh::with_group_report(script, tpush::ssh::HangUpWatch::stdin);
  const std::string fifo = (dir / "stdin").string();
  return "rm -f '" + fifo + "'; mkfifo '" + fifo + "'; /bin/sh -c " +
         tpush::util::shell_quote("/bin/sleep 60 > '" + fifo + "' & w=$!; setsid env -i PATH=/nonexistent " + shell + " -c \"$1\" < '" +
                                  fifo + "' " + after) +
         " sh " + tpush::util::shell_quote(prologue) + " 2>&1";
}

// Waits up to 10 s until no process's command line holds `text`.
bool wait_gone_from_proc(const std::string& text) {
  for (int i = 0; i < 200; ++i) {
    bool found = false;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
      const std::string name = entry.path().filename();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::ifstream in(entry.path() / "cmdline", std::ios::binary);
      const std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (cmdline.find(text) != std::string::npos) found = true;
    }
    if (!found) return true;
    ::usleep(50'000);
  }
  return false;
}

}  // namespace

TEST_CASE("remote group: the watch on stdin hangs up a command whose session ended, and only then") {
  const tpush::test::TempDir dir;
  const std::string started = (dir / "started").string();
  const std::string left = (dir / "left").string();
  for (const char* shell : kShells) {
    CAPTURE(shell);
    std::filesystem::remove(started);
    // The session (the writer) ends once the command runs; the command would
    // print "survived" after 30 s if the hang-up never came.
    auto r = run_shell(under_stdin_watch(
        dir, shell, "/bin/touch '" + started + "'; /bin/sleep 30; echo survived",
        "& c=$!; while [ ! -e '" + started + "' ]; do sleep 0.02; done; kill $w; wait $c; exit 0"));
    CHECK(r.out.find("survived") == std::string::npos);

    // A command that ends first ends as it does: its status, its stdin EOF at
    // once, no fd 3, and no hang-up for what it left running on purpose once the
    // writer goes (as sshd closes the pipe when the shell ends).
    std::filesystem::remove(left);
    r = run_shell(under_stdin_watch(
        dir, shell,
        "/bin/cat; [ -e /dev/fd/3 ] && echo fd 3 open; /bin/sleep 30 >/dev/null 2>&1 & echo $! > '" + left +
            "'; echo done; exit 4",
        "; s=$?; kill $w; exit $s"));
    CHECK(r.status == 4);
    GroupReport g;
    CHECK(filtered(r.out, 5, g) == "done\n");
    CHECK(g.pgid());
    const auto job = tpush::test::read_file(left);
    REQUIRE(!job.empty());
    // Once the watch is gone (it shares the shell's command line, which names
    // `left`), the job it must not touch still runs.
    CHECK(wait_gone_from_proc(left));
    CHECK(run_shell("kill -0 " + job).status == 0);
    run_shell("kill " + job);
  }
}

TEST_CASE("remote group: a guard directory that is not the user's is never used") {
  const tpush::test::TempDir dir;  // XDG_RUNTIME_DIR
  // Someone else's directory where the connection's would be: root's `/` for a
  // normal user; for root, one given to nobody. The command still runs, with
  // its own watchdog, and writes nothing there.
  const std::string foreign = (dir / "foreign").string();
  const bool root = ::geteuid() == 0;
  if (root) {
    std::filesystem::create_directory(foreign);
    REQUIRE(::chown(foreign.c_str(), 65534, 65534) == 0);
  }
  const std::string place = "ln -s " + std::string(root ? foreign : "/") + " \"$XDG_RUNTIME_DIR/tpush-guard-$$\"; ";
  auto r = run_shell(under_connection(dir, "/bin/dash", "echo ran", "", place));
  CHECK(r.status == 0);
  GroupReport g;
  CHECK(filtered(r.out, 5, g) == "ran\n");
  CHECK(g.pgid());
  if (root) CHECK(std::filesystem::is_empty(foreign));
}
