// The kept shell's script (what runs on the worker), fed commands on stdin by a
// real bash, as the master feeds it over the channel; and by dash, as a login
// shell that is not bash.
#include <doctest/doctest.h>

#include <string>

#include "test_support.h"
#include "tpush/ssh/kept_shell.h"
#include "tpush/ssh/remote_group.h"
#include "tpush/ssh/kept_shell_marker.h"
#include "tpush/util/shell_quote.h"

namespace {

using tpush::test::run_shell;
using tpush::util::shell_quote;

const std::string kHello = "tpush:shell:feedc0de:";

std::string end_tag(int n) { return "tpush:end:0000000" + std::to_string(n) + ":"; }

std::string claim(int n) { return "c1aim" + std::to_string(n); }

// A command as KeptShell::run() sends it.
std::string sent(const std::string& command, int n) {
  const std::string text = command + "\n";
  std::size_t lines = 0;
  for (char c : text) lines += c == '\n';
  return std::to_string(lines) + " " + tpush::ssh::group_tag() + " " + end_tag(n) + " " + claim(n) + "\n" + text;
}

// The directory the shell names when ready (its guardian's), for claims.
std::string claims_dir(const std::string& out) {
  const std::string ready = kHello + "ready ";
  REQUIRE(out.rfind(ready, 0) == 0);
  return out.substr(ready.size(), out.find('\n') - ready.size());
}

// Runs the script in `shell` (in a session of its own, as sshd starts it) with
// `input` on stdin; stdout, then "--" and stderr.
tpush::test::ShellRun feed(const tpush::test::TempDir& dir, const char* shell, const std::string& input,
                           const std::string& env = "") {
  const std::string err = (dir.path() / "err").string();
  const auto r = run_shell("printf %s " + shell_quote(input) + " | XDG_RUNTIME_DIR=" + dir.path().string() + " " +
                           env + " setsid " + shell + " -c " + shell_quote(tpush::ssh::kept_shell_script(kHello)) +
                           " 2>" + err + "; echo --; cat " + err);
  return r;
}

// The output before the marker with `tag`, and the marker's word.
std::pair<std::string, std::string> until_marker(std::string& stream, const std::string& tag) {
  tpush::ssh::KeptShellMarker m(tag);
  std::string before = m.feed(stream);
  REQUIRE(m.word());
  stream = m.take_rest();
  return {before, *m.word()};
}

}  // namespace

TEST_CASE("kept shell: bash says where its claims are and runs each command in a group of its own, with nothing of its own") {
  const tpush::test::TempDir dir;
  const std::string input = sent("p=$BASHPID; echo \"[$(set | grep -c '^tpush_')] [$#] [$(cut -d' ' -f5 /proc/$p/stat)]\"; "
                                 "echo $p >&2; exit 3",
                                 1) +
                            sent("printf 'no newline'; printf two\\\\nlines >&2", 2);
  const auto r = feed(dir, "/bin/bash", input);
  const std::size_t split = r.out.find("--\n");
  REQUIRE(split != std::string::npos);
  std::string out = r.out.substr(0, split), err = r.out.substr(split + 3);
  const std::string claims = claims_dir(out);
  CHECK(claims.rfind(dir.path().string() + "/tpush-guard-", 0) == 0);
  out.erase(0, out.find('\n') + 1);
  auto [out1, word1] = until_marker(out, end_tag(1));
  CHECK(word1 == "3");
  auto [err1, eword1] = until_marker(err, end_tag(1));
  CHECK(eword1 == "3");
  tpush::ssh::GroupReport group;
  std::string own_err = group.filter(err1);
  own_err += group.flush();
  REQUIRE(group.pgid());
  // No tpush_ variable or function, no positional parameter, and the command's
  // shell leads its own process group.
  CHECK(out1 == "[0] [0] [" + std::to_string(*group.pgid()) + "]\n");
  CHECK(own_err == std::to_string(*group.pgid()) + "\n");
  auto [out2, word2] = until_marker(out, end_tag(2));
  CHECK(out2 == "no newline");
  CHECK(word2 == "0");
  auto [err2, eword2] = until_marker(err, end_tag(2));
  tpush::ssh::GroupReport group2;
  std::string own_err2 = group2.filter(err2);
  own_err2 += group2.flush();
  CHECK(own_err2 == "two\nlines");
  CHECK(eword2 == "0");
}

TEST_CASE("kept shell: a changed login file declines the command, a process left in the group ends the shell") {
  const tpush::test::TempDir dir;
  const std::string bash_env = dir.write("bash_env", "\n").string();
  SUBCASE("changed") {
    const auto r = feed(dir, "/bin/bash", sent("echo x >> \"$BASH_ENV\"", 1) + sent("echo not run", 2),
                        "BASH_ENV=" + bash_env);
    CHECK(r.out.find(end_tag(1) + "0\n") != std::string::npos);
    CHECK(r.out.find(end_tag(2) + "stale\n") != std::string::npos);
    CHECK(r.out.find("not run") == std::string::npos);
  }
  SUBCASE("changed in the same clock tick") {
    // An edit in the tick the shell started in, on purpose: the file keeps its
    // size and its mtime to the nanosecond, as a comparison of times would see
    // an edit made a few ms after the shell read it (file times move in ticks).
    const auto r = feed(dir, "/bin/bash",
                        sent("was=$(stat -c '%s %y' \"$BASH_ENV\"); cp -p \"$BASH_ENV\" \"$BASH_ENV.was\"; "
                             "printf x > \"$BASH_ENV\"; touch -r \"$BASH_ENV.was\" \"$BASH_ENV\"; "
                             "[ \"$(stat -c '%s %y' \"$BASH_ENV\")\" = \"$was\" ] && echo same size and time", 1) +
                            sent("echo not run", 2),
                        "BASH_ENV=" + bash_env);
    CHECK(r.out.find("same size and time\n" + end_tag(1) + "0\n") != std::string::npos);
    CHECK(r.out.find(end_tag(2) + "stale\n") != std::string::npos);
    CHECK(r.out.find("not run") == std::string::npos);
  }
  SUBCASE("changed after a NUL byte") {
    // bash drops NUL bytes from a file it sources and runs what follows them.
    const std::string with_nul = dir.write("bash_env", std::string(": a\n\0: b\n", 9)).string();
    const auto r = feed(dir, "/bin/bash",
                        sent("cp -p \"$BASH_ENV\" \"$BASH_ENV.was\"; printf ': a\\n\\0: c\\n' > \"$BASH_ENV\"; "
                             "touch -r \"$BASH_ENV.was\" \"$BASH_ENV\"; cmp -s \"$BASH_ENV\" \"$BASH_ENV.was\" || echo edited", 1) +
                            sent("echo not run", 2),
                        "BASH_ENV=" + with_nul);
    CHECK(r.out.find("edited\n" + end_tag(1) + "0\n") != std::string::npos);
    CHECK(r.out.find(end_tag(2) + "stale\n") != std::string::npos);
    CHECK(r.out.find("not run") == std::string::npos);
  }
  SUBCASE("rewritten as it was") {
    // Written again with the same bytes (a deploy that changed nothing): a new
    // login would be the same, so the command runs here.
    const auto r = feed(dir, "/bin/bash", sent("printf '\\n' > \"$BASH_ENV\"", 1) + sent("echo ran", 2),
                        "BASH_ENV=" + bash_env);
    CHECK(r.out.find("ran\n" + end_tag(2) + "0\n") != std::string::npos);
  }
  SUBCASE("removed") {
    const auto r = feed(dir, "/bin/bash", sent("rm \"$BASH_ENV\"", 1) + sent("echo not run", 2),
                        "BASH_ENV=" + bash_env);
    CHECK(r.out.find(end_tag(2) + "stale\n") != std::string::npos);
    CHECK(r.out.find("not run") == std::string::npos);
  }
  SUBCASE("left behind") {
    const auto r = feed(dir, "/bin/bash", sent("sleep 1 >/dev/null 2>&1 & exit 4", 1) + sent("echo not run", 2));
    CHECK(r.out.find(end_tag(1) + "4+\n") != std::string::npos);
    CHECK(r.out.find("not run") == std::string::npos);
  }
}

TEST_CASE("kept shell: a login shell that is not bash leaves at once") {
  const tpush::test::TempDir dir;
  const auto r = feed(dir, "/bin/dash", sent("echo not run", 1));
  CHECK(r.out == "--\n");
}

TEST_CASE("kept shell: a command already claimed is not run, and the shell removes its own claims in batches") {
  const tpush::test::TempDir dir;
  const std::string guard = "\"$XDG_RUNTIME_DIR\"/tpush-guard-*";
  SUBCASE("claimed") {
    const auto r = feed(dir, "/bin/bash",
                        sent("for d in " + guard + "; do : > \"$d/c" + claim(2) + "\"; done", 1) + sent("echo not run", 2));
    CHECK(r.out.find(end_tag(1) + "0\n") != std::string::npos);
    CHECK(r.out.find(end_tag(2) + "claimed\n") != std::string::npos);
    CHECK(r.out.find("not run") == std::string::npos);
  }
  SUBCASE("removed") {
    std::string input;
    for (int n = 1; n <= 65; ++n) input += sent("true", n);
    input += sent("ls " + guard + " | grep -c '^c'", 66);
    const auto r = feed(dir, "/bin/bash", input);
    // The 64 claims before the 65th command are gone; the last two are left.
    CHECK(r.out.find("\n2\n" + end_tag(66) + "0\n") != std::string::npos);
  }
}

TEST_CASE("kept shell: a command behind a claim runs only if the claim was free") {
  const tpush::test::TempDir dir;
  const std::string claim_file = (dir.path() / "c1aim1").string();
  const auto run = [&](const std::string& claim_path) {
    return run_shell("bash -c " + shell_quote(tpush::ssh::with_claim(claim_path, "echo ran")) + "; echo \"[$?]\"");
  };
  CHECK(run(claim_file).out == "ran\n[0]\n");
  CHECK(run(claim_file).out == "[255]\n");  // claimed: by the kept shell, in life
  CHECK(run((dir.path() / "gone" / "c1aim1").string()).out == "[255]\n");  // the session's directory is gone
}
