// The kill / kill --tpu / ps / logs / --detach scripts, run with the local /bin/sh
// (dash on Debian) and bash against real local processes.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tpush/commands/process/process.h"
#include "tpush/util/shell_quote.h"
#include "test_support.h"

namespace {

using tpush::test::TempDir;

namespace fs = std::filesystem;
using namespace tpush::commands;
using tpush::util::shell_quote;

using Ran = tpush::test::ShellRun;

// Runs `command` as a worker's login shell would: `shell -c command`.
Ran run(const std::string& command, const std::string& shell = "/bin/sh", const std::string& env = "") {
  return tpush::test::run_shell(env + " " + shell + " -c " + shell_quote(command) + " 2>&1");
}

std::string unique(const std::string& what) {
  std::random_device rd;
  std::ostringstream s;
  s << "tpush-test-" << what << "-" << std::hex << rd() << rd();
  return s.str();
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool alive(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return false;
  const auto close = line.rfind(')');
  return close != std::string::npos && line.size() > close + 2 && line[close + 2] != 'Z' &&
         line[close + 2] != 'X';
}

bool wait_until(const std::function<bool()>& cond, double seconds = 10) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return cond();
}

// A process started with detach_command, killed at the end of the test if still alive.
struct DetachedJob {
  int pid = -1;
  ~DetachedJob() {
    if (pid > 0 && alive(pid)) ::kill(pid, SIGKILL);
  }
};

// Starts `body` detached (it must print "ready" once it is set up) and waits for it.
int start_job(DetachedJob& job, const std::string& body, const fs::path& log) {
  const Ran r = run("SHELL=/bin/sh; " + detach_command(body, log.string()));
  REQUIRE(r.status == 0);
  REQUIRE(r.out.rfind("started pid ", 0) == 0);
  job.pid = std::stoi(r.out.substr(12));
  REQUIRE(wait_until([&] { return read_file(log).find("ready") != std::string::npos; }));
  return job.pid;
}

std::string loop(const std::string& marker, bool ignore_term) {
  return std::string(ignore_term ? "trap '' TERM; " : "") + "echo ready; while :; do sleep 1 3<&-; done; : " +
         marker;
}

bool has_line(const std::string& out, const std::string& prefix) {
  std::istringstream in(out);
  for (std::string l; std::getline(in, l);)
    if (l.rfind(prefix, 0) == 0) return true;
  return false;
}

}  // namespace

TEST_CASE("signal names and patterns are checked before anything runs") {
  CHECK(signal_name("TERM") == "TERM");
  CHECK(signal_name("sigkill") == "KILL");
  CHECK(signal_name("15") == "TERM");
  CHECK(signal_name("usr1") == "USR1");
  CHECK_FALSE(signal_name("FOO"));
  CHECK_FALSE(signal_name("99"));
  CHECK(pattern_error("python .*train").empty());
  CHECK(pattern_error("-v").empty());
  CHECK_FALSE(pattern_error("a(b").empty());
}

TEST_CASE("kill --sudo's helper matches every user's processes, and sudo itself is the run's (--sudo)") {
  KillSpec spec;
  spec.all_users = true;
  const std::string all = kill_script("python", spec);
  CHECK(all.rfind("sh -c ", 0) == 0);
  CHECK(all.find(" python 1 ") != std::string::npos);
  CHECK(kill_script("python", {}).find(" python '' ") != std::string::npos);
  CHECK(tpu_kill_script({spec, std::nullopt, std::nullopt}).rfind("sh -c ", 0) == 0);
  // the defaults, and the worker's own TPUSH_TPU_* when no override is given
  const std::string tpu = tpu_kill_script({});
  CHECK(tpu.find("TPUSH_TPU_DEVICES:-") != std::string::npos);
  CHECK(tpu.find("/dev/accel* /dev/vfio/*") != std::string::npos);
  CHECK(tpu.find("/tmp/libtpu_lockfile /tmp/tpu_logs") != std::string::npos);
}

TEST_CASE("detach_command: own session, stdin from /dev/null, output appended, survives the shell") {
  TempDir dir;
  const fs::path log = dir.path() / "job.log";
  std::ofstream(log) << "earlier\n";
  DetachedJob job;
  const int pid = start_job(job, "echo ready; echo err >&2; exec sleep 30", log);
  // the shell that started it has exited; the job runs on, leader of its own session
  CHECK(alive(pid));
  CHECK(getsid(pid) == pid);
  CHECK(fs::read_symlink("/proc/" + std::to_string(pid) + "/fd/0") == "/dev/null");
  REQUIRE(wait_until([&] { return read_file(log).find("err") != std::string::npos; }));
  CHECK(read_file(log) == "earlier\nready\nerr\n");
}

TEST_CASE("detach_command: a log that cannot be created fails before starting anything") {
  const Ran r = run(detach_command("echo hi", "/nonexistent-dir/x.log"));
  CHECK(r.status != 0);
  CHECK(r.out.find("started pid") == std::string::npos);
}

TEST_CASE("kill: TERM, report, exit 0, the helper never matches itself") {
  TempDir dir;
  const std::string marker = unique("kill");
  DetachedJob job;
  const int pid = start_job(job, loop(marker, false), dir.path() / "log");
  for (const char* shell : {"/bin/sh", "bash"}) {
    // the helper's own command line holds the pattern too: it must not kill itself
    const Ran none = run(kill_script(unique("nomatch"), {}), shell);
    CHECK(none.status == 0);
    CHECK(none.out == "nothing matched\n");
  }
  const Ran r = run(kill_script(marker, {}));
  CHECK(r.status == 0);
  CHECK(has_line(r.out, "killed " + std::to_string(pid) + " "));
  CHECK(r.out.find(marker) != std::string::npos);
  CHECK(r.out.find("KILLed") == std::string::npos);
  CHECK_FALSE(alive(pid));
}

TEST_CASE("kill: a process that ignores TERM gets KILL after the grace") {
  TempDir dir;
  const std::string marker = unique("stubborn");
  for (const char* scan : {"", "TPUSH_PROC_SCAN=1"}) {
    CAPTURE(scan);
    DetachedJob job;
    const int pid = start_job(job, loop(marker, true), dir.path() / (std::string("log") + scan));
    KillSpec spec;
    spec.grace = 0.3;
    const auto t0 = std::chrono::steady_clock::now();
    const Ran r = run(kill_script(marker, spec), "/bin/sh", scan);
    CHECK(std::chrono::steady_clock::now() - t0 >= std::chrono::milliseconds(300));
    CHECK(r.status == 0);
    CHECK(has_line(r.out, "killed " + std::to_string(pid) + " "));
    CHECK(has_line(r.out, "KILLed " + std::to_string(pid) + " "));
    CHECK_FALSE(alive(pid));
  }
}

TEST_CASE("kill: a pattern starting with '-', the /proc scan, bash as sh") {
  TempDir dir;
  const std::string marker = "-" + unique("dash");
  DetachedJob job;
  const int pid = start_job(job, loop(marker, false), dir.path() / "log");
  const std::string script = kill_script(marker, {});
  REQUIRE(script.rfind("sh -c ", 0) == 0);
  const Ran r = run("bash -c " + script.substr(6), "bash", "TPUSH_PROC_SCAN=1");
  CHECK(r.status == 0);
  CHECK(has_line(r.out, "killed " + std::to_string(pid) + " "));
  CHECK_FALSE(alive(pid));
}

TEST_CASE("kill -s CONT only sends the signal") {
  TempDir dir;
  const std::string marker = unique("cont");
  DetachedJob job;
  const int pid = start_job(job, loop(marker, false), dir.path() / "log");
  KillSpec spec;
  spec.signal = "CONT";
  const Ran r = run(kill_script(marker, spec));
  CHECK(r.status == 0);
  CHECK(has_line(r.out, "sent CONT " + std::to_string(pid) + " "));
  CHECK(alive(pid));
}

TEST_CASE("kill --tpu: stops the holders, waits for the device, removes the lock files") {
  TempDir dir;
  const fs::path dev = dir.path() / "accel0";
  std::ofstream(dev) << "";
  const fs::path lock = dir.path() / "libtpu_lockfile";
  const fs::path logs = dir.path() / "tpu_logs";
  for (const char* scan : {"", "TPUSH_PROC_SCAN=1"}) {
    CAPTURE(scan);
    std::ofstream(lock) << "";
    fs::create_directories(logs / "sub");
    std::ofstream(logs / "sub" / "f") << "x";
    DetachedJob job;
    const int pid = start_job(job, "exec 3<" + shell_quote(dev.string()) + "; " + loop(unique("holder"), true),
                              dir.path() / (std::string("log") + scan));
    TpuKillSpec spec;
    spec.kill.grace = 0.2;
    spec.devices = (dir.path() / "accel*").string() + " " + (dir.path() / "vfio" / "*").string();
    spec.lockfiles = lock.string() + " " + logs.string();
    const Ran r = run(tpu_kill_script(spec), "/bin/sh", scan);
    CHECK(r.status == 0);
    CHECK(has_line(r.out, "killed " + std::to_string(pid) + " "));
    CHECK(has_line(r.out, "KILLed " + std::to_string(pid) + " "));
    CHECK(has_line(r.out, "removed " + lock.string()));
    CHECK(has_line(r.out, "removed " + logs.string()));
    CHECK_FALSE(alive(pid));
    CHECK_FALSE(fs::exists(lock));
    CHECK_FALSE(fs::exists(logs));
    // again: nothing holds the device, nothing to remove
    const Ran again = run(tpu_kill_script(spec), "/bin/sh", scan);
    CHECK(again.status == 0);
    CHECK(has_line(again.out, "no process holds the TPU (1 devices)"));
    CHECK(has_line(again.out, "no TPU lock files"));
  }
  TpuKillSpec none;
  none.devices = (dir.path() / "nothing*").string();
  none.lockfiles = (dir.path() / "nolock").string();
  const Ran r = run(tpu_kill_script(none));
  CHECK(r.status == 0);
  CHECK(has_line(r.out, "no TPU devices here (" + (dir.path() / "nothing*").string() + ")"));
}

TEST_CASE("ps: lists matching processes with pid and elapsed time, never itself") {
  TempDir dir;
  const std::string marker = unique("ps");
  DetachedJob job;
  const int pid = start_job(job, loop(marker, false), dir.path() / "log");
  for (const char* scan : {"", "TPUSH_PROC_SCAN=1"}) {
    CAPTURE(scan);
    const Ran r = run(ps_script(marker, false), "/bin/sh", scan);
    CHECK(r.status == 0);
    std::istringstream in(r.out);
    std::string header, row, extra;
    std::getline(in, header);
    std::getline(in, row);
    CHECK_FALSE(std::getline(in, extra));  // one match: the job, not the helper
    CHECK(header == "    PID     ELAPSED COMMAND");
    std::istringstream fields(row);
    int p = 0;
    std::string elapsed;
    fields >> p >> elapsed;
    CHECK(p == pid);
    CHECK(elapsed.size() == 5);  // mm:ss
    CHECK(row.find(marker) != std::string::npos);
  }
  CHECK(run(ps_script(unique("absent"), false)).out == "nothing matched\n");
  const Ran all = run(ps_script(std::nullopt, false));
  CHECK(all.status == 0);
  CHECK(all.out.find(marker) != std::string::npos);
  CHECK(all.out.find(helper_marker) == std::string::npos);
}

TEST_CASE("logs: last lines of a file, ~ is the remote home") {
  TempDir dir;
  std::ofstream f(dir.path() / "train.log");
  for (int i = 1; i <= 20; ++i) f << "line " << i << "\n";
  f.close();
  const Ran r = run(logs_command((dir.path() / "train.log").string(), "3", false));
  CHECK(r.status == 0);
  CHECK(r.out == "line 18\nline 19\nline 20\n");
  const Ran home = run("HOME=" + shell_quote(dir.path().string()) + "; " + logs_command("~/train.log", "+19", false));
  CHECK(home.out == "line 19\nline 20\n");
  CHECK(run(logs_command((dir.path() / "missing.log").string(), "10", false)).status != 0);
}

TEST_CASE("kill: the tpush that sent it, and its ancestors, are never matched on its own machine") {
  // `timeout 60 tpush -w localhost kill PATTERN`: timeout's command line holds PATTERN.
  TempDir dir;
  const std::string marker = unique("client");
  const fs::path child_pid = dir.path() / "child";
  DetachedJob wrapper, other;
  const int w = start_job(wrapper,
                          "sh -c 'while :; do sleep 1; done' & echo $! > " + child_pid.string() +
                              "; echo ready; wait; : " + marker,
                          dir.path() / "wlog");
  const int x = start_job(other, loop(marker, false), dir.path() / "xlog");
  // The "client" is the wrapper's child, as tpush is timeout's.
  const std::string client = local_client(Options{});
  REQUIRE(client.find(" " + std::to_string(getpid()) + " ") != std::string::npos);
  // Run by a persist master, the client is the tpush the user started.
  tpush::fanout::RunHost host;
  host.client = getppid();
  Options served;
  served.run_host = &host;
  const std::string theirs = local_client(served);
  CHECK(theirs.substr(0, theirs.find(' ')) == client.substr(0, client.find(' ')));
  CHECK(theirs.find(" " + std::to_string(getppid()) + " ") != std::string::npos);
  const int c = std::stoi(read_file(child_pid));
  std::string stat = read_file("/proc/" + std::to_string(c) + "/stat");
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string start;
  for (int i = 3; i <= 22; ++i) fields >> start;
  const std::string boot = client.substr(0, client.find(' '));

  KillSpec spec;
  spec.client = boot + " " + std::to_string(c) + " " + start;
  Ran r = run(kill_script(marker, spec));
  CHECK(r.status == 0);
  CHECK(has_line(r.out, "killed " + std::to_string(x) + " "));
  CHECK(r.out.find("killed " + std::to_string(w) + " ") == std::string::npos);
  CHECK(alive(w));
  CHECK_FALSE(alive(x));

  SUBCASE("another machine's client (another boot id) protects nothing here") {
    spec.client = "not-this-boot " + std::to_string(c) + " " + start;
    r = run(kill_script(marker, spec));
    CHECK(has_line(r.out, "killed " + std::to_string(w) + " "));
    CHECK_FALSE(alive(w));
  }
  SUBCASE("a pid whose start time differs is not the client") {
    spec.client = boot + " " + std::to_string(c) + " 1";
    r = run(kill_script(marker, spec));
    CHECK(has_line(r.out, "killed " + std::to_string(w) + " "));
  }
  ::kill(c, SIGKILL);
}
