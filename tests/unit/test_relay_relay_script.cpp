// The relay's control script, run by bash as a worker runs it, with the test
// in tpush's place: it sends the setup and the orders, and feeds the FIFO
// with the feed command a hop key's forced command would run. (Passing the
// bytes on between workers over ssh is tested against sshd in test_relay.py.)
#include <doctest/doctest.h>
#include <openssl/evp.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "test_support.h"
#include "tpush/relay/relay_script.h"

namespace fs = std::filesystem;
using namespace tpush::relay;
using tpush::test::has;
using tpush::test::read_file;
using tpush::test::run_shell;

namespace {

std::string sha256_hex(const std::string& bytes) {
  unsigned char md[32];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr);
  static const char* hex = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < len; ++i) out += {hex[md[i] >> 4], hex[md[i] & 15]};
  return out;
}

// A worker played locally: a home with an authorized_keys file (which the
// script must never touch), the files of a transfer, and a driver script that
// speaks to the control script.
struct Worker : tpush::test::TempDir {
  std::string id = [] {
    std::random_device rd;
    return std::to_string(rd()) + std::to_string(rd());
  }();
  fs::path keys = *this / "ssh/authorized_keys";
  std::vector<ManifestEntry> manifest;
  std::string stream;  // what tpush sends: the files' bytes in manifest order
  std::string control_env;  // NAME=VALUE words the control script runs with (no single quotes)

  Worker() { fs::create_directories(*this / "ssh"); }

  void add_dir(const std::string& path) { manifest.push_back({true, 0750, 0, 0, "", (*this / path).string()}); }
  void add_file(const std::string& path, const std::string& bytes, unsigned mode = 0644) {
    manifest.push_back({false, mode, 1700000000, bytes.size(), sha256_hex(bytes), (*this / path).string()});
    stream += bytes;
  }

  // Runs the control script to the end of one attempt fed with `feed`, then
  // `after` (shell code, run before "quit"); returns the driver's output: the
  // script's reports ("ready" without its directory, which the driver keeps in
  // $dir and in the file `relaydir`), then what `after` printed. The script's
  // directory is made in this directory's tmp/ (TMPDIR).
  tpush::test::ShellRun run(const std::string& feed, const std::string& after = ":",
                            const std::string& feeding = "bash feed < stream") {
    prepare(feed);
    return drive("echo \"go 1 -\" >&${CTL[1]}; " + feeding + "; "
                 "while read -r line <&${CTL[0]}; do echo \"$line\"; [ \"$line\" = end ] && break; done; " +
                 after + "; echo quit >&${CTL[1]}; wait $CTL_PID; echo exit $?");
  }
  // Writes the control command (ending after `silence` seconds without an
  // order), the feed (feed.in, for "/RELAYDIR"), the hop's receiving command
  // (sender), the setup and the stream.
  void prepare(const std::string& feed, int silence = kSilenceSeconds) {
    fs::create_directories(*this / "tmp");
    write("command", relay_control_command(false, silence));
    write("feed.in", relay_feed_command("/RELAYDIR", 1));
    write("sender", relay_hop_script());
    write("setup", relay_setup(manifest));
    write("stream", feed);
  }
  // Starts the control script as a coprocess (CTL), sends the setup, reads its
  // "ready DIR" line, prints "ready", keeps DIR in $dir and in `relaydir`, makes
  // `feed` for it, then runs `then` (bash, no single quotes).
  tpush::test::ShellRun drive(const std::string& then) {
    const std::string d = path().string();
    return run_shell("cd '" + d + "' && TMPDIR='" + d + "/tmp' bash -c '"
                     "coproc CTL { " + control_env + " bash command 2>err; }; cat setup >&${CTL[1]}; "
                     "read -r line <&${CTL[0]}; echo \"${line%% *}\"; dir=${line#ready }; echo \"$dir\" > relaydir; "
                     "sed \"s|/RELAYDIR|$dir|\" feed.in > feed; " + then + "'");
  }
  // The directory the control script made (its "ready" line), after run().
  std::string relay_dir() const {
    std::string d = read_file(*this / "relaydir");
    while (!d.empty() && d.back() == '\n') d.pop_back();
    return d;
  }
};

std::string join_lines(const std::vector<std::string>& lines, std::size_t from, std::size_t to) {
  std::string out;
  for (std::size_t i = from; i < to; ++i) out += (out.empty() ? "" : " ") + lines[i];
  return out;
}

}  // namespace

TEST_CASE("relay script: every file checked and renamed into place, nothing left behind") {
  Worker w;
  w.add_dir("out");
  w.add_file("out/a", std::string(300000, 'a'));
  w.add_file("out/sub/b c", "bee\n", 0755);
  w.add_file("out/empty", "");
  w.write("ssh/authorized_keys", "ssh-ed25519 AAAAmine me@laptop");  // no newline at the end
  const auto r = w.run(w.stream, "stat -c %a \"$dir\"; ls -A \"$dir\"");
  // "stored" says how long the attempt took, in milliseconds.
  const auto lines = tpush::test::lines_of(r.out);
  REQUIRE(lines.size() == 9);
  CHECK(lines[1].rfind("stored ", 0) == 0);
  CHECK(lines[1].find_first_not_of("0123456789", 7) == std::string::npos);
  CHECK(join_lines(lines, 0, 1) == "ready");
  CHECK(join_lines(lines, 2, 9) == "end 700 err fwd in.2 in.3 exit 0");
  // its directory, in TMPDIR, gone at the end
  CHECK(w.relay_dir().rfind((w / "tmp/tpush-relay.").string(), 0) == 0);
  CHECK(w.relay_dir().size() == (w / "tmp/tpush-relay.").string().size() + 16);  // 16 random hex digits
  CHECK_FALSE(fs::exists(w.relay_dir()));
  CHECK(fs::is_empty(w / "tmp"));
  CHECK(read_file(w / "out/a") == std::string(300000, 'a'));
  CHECK(read_file(w / "out/sub/b c") == "bee\n");
  CHECK(fs::exists(w / "out/empty"));
  CHECK((fs::status(w / "out/sub/b c").permissions() & fs::perms::owner_exec) != fs::perms::none);
  CHECK((fs::status(w / "out/a").permissions() & fs::perms::others_read) != fs::perms::none);  // 0644, as asked
  CHECK((fs::status(w / "out").permissions() & fs::perms::group_write) == fs::perms::none);
  // a parent the manifest does not name is made as before: 0755
  CHECK((fs::status(w / "out/sub").permissions() & fs::perms::others_exec) != fs::perms::none);
  CHECK(read_file(w.keys) == "ssh-ed25519 AAAAmine me@laptop");  // byte for byte as it was
  CHECK(run_shell("find '" + w.path().string() + "/out' -name '.*tpush*'").out.empty());
}

TEST_CASE("relay script: files in the worker's directory named like its manifest's fields change nothing") {
  // read's targets (kind[n], ...) were once file name patterns too, and a file
  // "kindn" in the directory the script runs in took the manifest's field.
  Worker w;
  w.add_file("out/a", "aaa");
  for (const char* name : {"kindn", "moden", "mtimen", "sizen", "sumn", "pathn"}) w.write(name, "");
  const auto r = w.run(w.stream);
  const auto lines = tpush::test::lines_of(r.out);
  REQUIRE(lines.size() == 4);
  CHECK(lines[1].rfind("stored ", 0) == 0);
  CHECK(join_lines(lines, 2, 4) == "end exit 0");
  CHECK(read_file(w / "out/a") == "aaa");
}

TEST_CASE("relay script: the hop's command takes only a plain relay directory of the user's") {
  // What a sending worker's ssh runs on this one: its stdin into the attempt's
  // FIFO, in a directory that is the user's own relay directory, never a link.
  Worker w;
  w.add_file("x", "x");
  const auto r = w.run(w.stream,
                       "for a in \"1 $dir/../x\" \"1 /tmp/other\" \"x $dir\" \"1 $dir;id\"; do "
                       "sh -c \"$(cat sender)\" tpush-relay $a < /dev/null; echo $?; done; "
                       "ln -s \"$dir\" tmp/tpush-relay.link; sh -c \"$(cat sender)\" tpush-relay 1 \"$PWD/tmp/tpush-relay.link\"; echo $?");
  CHECK(r.out.find("\n2\n2\n2\n2\n2\nexit 0\n") != std::string::npos);
  CHECK(relay_hop_script().find('\'') == std::string::npos);
  CHECK_FALSE(fs::exists(w.keys));  // no authorized_keys made
}

TEST_CASE("relay script: bytes that are not tpush's, or too few, are not renamed into place") {
  SUBCASE("other bytes") {
    Worker w;
    w.add_file("a", "right");
    const auto r = w.run("wrong");
    CHECK(r.out == "ready\nmismatch 0\nend\nexit 0\n");
    CHECK(fs::is_empty(w / "tmp"));
    CHECK_FALSE(fs::exists(w / "a"));
  }
  SUBCASE("the sender went away") {
    Worker w;
    w.add_file("a", "whole");
    w.add_file("b", "never");
    const auto r = w.run("whole" "nev");
    CHECK(r.out == "ready\nshort 1 3\nend\nexit 0\n");
    CHECK(read_file(w / "a") == "whole");  // a file complete and checked stays
    CHECK_FALSE(fs::exists(w / "b"));
    CHECK(run_shell("ls -A '" + w.path().string() + "'").out ==
          "a\ncommand\nerr\nfeed\nfeed.in\nrelaydir\nsender\nsetup\nssh\nstream\ntmp\n");
    CHECK(fs::is_empty(w / "tmp"));
  }
  SUBCASE("a file that cannot be written") {
    Worker w;
    w.write("blocker", "a file where a directory should be");
    w.add_file("blocker/a", "a");
    const auto r = w.run("a");
    CHECK(has(r.out, "ready\nfailed 0 mkdir: cannot create directory"));
    CHECK(has(r.out, "end\nexit 0\n"));
  }
}

TEST_CASE("relay script: a writer that opens a FIFO while it is released never waits for a reader") {
  // release() once opened the attempt's FIFO and closed it again before removing
  // it: a writer (tpush's feed) whose open came in between waited for a reader
  // forever, and hung this file in CI once. Here the script's `rm` of that FIFO
  // first starts such a writer and waits until it has opened the FIFO or waits
  // in open() for a reader.
  Worker w;
  w.add_file("a", "whole");
  fs::create_directories(w / "shim");
  w.write("shim/rm",
          "#!/bin/sh\n"
          "case ${2-} in */in.1) [ -p \"$2\" ] || exit 9\n"
          "  sh -c 'exec 3> \"$1\"; echo opened' late \"$2\" >> \"$LATE/late.out\" 2>&1 &\n"
          "  echo $! > \"$LATE/late.pid\"; i=0\n"
          "  until [ -s \"$LATE/late.out\" ] || { read -r wchan < /proc/$!/wchan; [ \"${wchan-}\" = wait_for_partner ]; } ||\n"
          "    [ $((i += 1)) -gt 100000 ]; do :; done 2>/dev/null ;;\n"
          "esac\n"
          "exec /bin/rm \"$@\"\n");
  fs::permissions(w / "shim/rm", fs::perms::owner_all);
  w.control_env = "PATH=" + (w / "shim").string() + ":$PATH LATE=" + w.path().string();
  const auto r = w.run(w.stream,
                       "p=$(cat late.pid); if timeout 10 tail --pid=\"$p\" -f /dev/null; then echo late writer gone; "
                       "else echo late writer still waiting; kill \"$p\"; fi; cat late.out");
  CHECK(has(r.out, "\nend\nlate writer gone\nopened\nexit 0\n"));
  CHECK(read_file(w / "a") == "whole");
  CHECK(fs::is_empty(w / "tmp"));
}

TEST_CASE("relay script: tpush's feed cuts off a sender that had reached the worker, and never follows its bytes") {
  // A sending worker lost mid-stream (its VM gone: no FIN reaches this one)
  // still holds the FIFO. tpush's feed kills it and exits 3 instead of
  // appending its own bytes to the part that came; the copy ends short.
  Worker w;
  w.add_file("a", "whole");
  const auto r = w.run(w.stream, ":",
                       "mkfifo hold; sh -c \"$(cat sender)\" tpush-relay 1 \"$dir\" < hold & "
                       "exec 5> hold; printf wh >&5; until [ -s \"$dir/in.1.pid\" ]; do :; done; "
                       "bash feed < stream; echo feed $?; exec 5>&-");
  const auto lines = tpush::test::lines_of(r.out);
  REQUIRE(lines.size() == 5);
  CHECK(lines[0] == "ready");
  CHECK(lines[1] == "feed 3");
  CHECK(lines[2].rfind("short 0 ", 0) == 0);  // what had arrived of "wh", if anything
  CHECK(lines[3] == "end");
  CHECK_FALSE(fs::exists(w / "a"));
  // With no sender before it, the feed is the sender: the first test case.
}

TEST_CASE("relay script: a copy of one file is stored by its writer, and a writer that comes too late makes nothing") {
  // One file: the FIFO's writer (tpush's feed here) writes it into the
  // temporary file the script named in in.1.to, and the script checks it.
  Worker w;
  w.add_file("out/one", std::string(200000, 'z'));
  const auto r = w.run(w.stream, "ls -A \"$dir\"");
  CHECK(r.out.find("\nend\nerr\nfwd\nin.2\nin.3\nexit 0\n") != std::string::npos);
  CHECK(read_file(w / "out/one") == std::string(200000, 'z'));
  CHECK(run_shell("find '" + w.path().string() + "/out' -name '.*tpush*'").out.empty());
  // A writer that opens the FIFO after the receiver removed the temporary file
  // (in.1.to still naming it) fails and makes no file in its place.
  const std::string d = (w / "tmp/tpush-relay.late").string();
  const auto late = run_shell("mkdir -m 700 '" + d + "' && mkfifo '" + d + "/in.1' && cd '" + w.path().string() +
                              "' && printf '1\\n%s\\n' \"$PWD/out/.one.tpush-gone\" > '" + d + "/in.1.to' && "
                              "{ cat '" + d + "/in.1' > /dev/null & } && echo bytes | sh -c \"$(cat sender)\" "
                              "tpush-relay 1 '" + d + "' 2> /dev/null; echo $?; wait; ls -A out");
  CHECK(late.out.substr(late.out.find('\n') + 1) == "one\n");
  CHECK(late.out.rfind("0\n", 0) != 0);  // it failed
}

TEST_CASE("relay script: with no word from tpush for its silence it ends, stops the feeds it recorded, leaves nothing") {
  // A cut network: tpush's "-" stop coming, and a feed from tpush that reached the
  // worker sits there with nothing to read. The script ends by itself (exit 124),
  // stops that feed, and removes its directory.
  Worker w;
  w.add_file("a", "whole");
  w.prepare(w.stream, 1);
  const auto r = w.drive("mkfifo hold; bash feed < hold & feed=$!; exec 5> hold; "
                         "until [ -s \"$dir/in.1.feed\" ]; do :; done; "
                         "wait $CTL_PID; echo exit $?; wait $feed; echo feed $?; ls -A tmp; exec 5>&-");
  CHECK(r.out == "ready\nexit 124\nfeed 143\n");
  CHECK_FALSE(fs::exists(w.relay_dir()));
  CHECK_FALSE(fs::exists(w / "a"));
}

TEST_CASE("relay script: a recorded pid that is no longer that process is not signalled") {
  // The feed that recorded itself is gone and its pid taken by another process:
  // the start time differs, and the script leaves that process alone.
  Worker w;
  w.add_file("a", "whole");
  w.prepare(w.stream, 1);
  const auto r = w.drive("sleep 600 & other=$!; echo \"$other 1\" > \"$dir/in.1.feed\"; "
                         "wait $CTL_PID; echo exit $?; kill -0 $other && echo alive; kill $other");
  CHECK(r.out == "ready\nexit 124\nalive\n");
  CHECK_FALSE(fs::exists(w.relay_dir()));
}

TEST_CASE("relay script: reports") {
  using K = RelayReport::Kind;
  CHECK(parse_relay_report("ready").kind == K::ready);
  const auto f = parse_relay_report("failed 3 mv: cannot move");
  CHECK(f.kind == K::failed);
  CHECK(f.index == 3);
  CHECK(f.text == "mv: cannot move");
  const auto setup = parse_relay_report("failed - cannot create /tmp/x");
  CHECK(setup.index == -1);
  CHECK(setup.text == "cannot create /tmp/x");
  CHECK(parse_relay_report("short 2 10").index == 2);
  CHECK(parse_relay_report("hop 255 Permission denied (publickey).").text == "255 Permission denied (publickey).");
  CHECK(parse_relay_report("mismatch x").kind == K::unknown);
  CHECK(parse_relay_report("Welcome to Ubuntu").kind == K::unknown);
  CHECK(relay_go(1, std::nullopt) == "go 1 -\n");
  CHECK(relay_go(2, HopTarget{"10.0.0.2", 22, "me", "tpush-relay-1-2", "ssh-ed25519 AAAAk",
                              "/tmp/tpush-relay.a1B2c3D4e5", "ssh-rsa AAAAme"}) ==
        "go 2 10.0.0.2 22 me tpush-relay-1-2 ssh-ed25519 AAAAk /tmp/tpush-relay.a1B2c3D4e5 ssh-rsa AAAAme\n");
}

TEST_CASE("relay script: only a plain absolute directory from a worker's ready line is ever put in a command") {
  using tpush::relay::plain_directory;
  CHECK(plain_directory("/tmp/tpush-relay.0123abcd4567ef89"));
  CHECK(plain_directory("/home/me/.cache/tmp/tpush-relay.x_y-z"));
  for (const char* bad : {"", "/", "tmp/tpush-relay.x", "/tmp/../etc", "/tmp/a b", "/tmp/x;id", "/tmp/$(id)",
                          "/tmp/x'y", "/tmp/x\ny", "/tmp/\xc3\xa9"}) {
    CAPTURE(bad);
    CHECK_FALSE(plain_directory(bad));
  }
  CHECK_THROWS_AS(relay_feed_command("/tmp/x;id", 1), std::invalid_argument);
}
