// How each worker is reached (commands/worker_reach): the user and port, and where each came from.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "test_support.h"
#include "tpush/commands/plan/worker_reach.h"
#include "tpush/inventory/inventory.h"

using tpush::commands::Options;
using tpush::commands::Reach;
using tpush::commands::ReachPlanner;
using tpush::inventory::Worker;

namespace {

// "user@host:port (user from, port from)" of each worker of a -w list, with -l USER and
// -p PORT (empty / 0: not given) and ssh_config `config` ("none": no file).
std::vector<std::string> reached(const std::string& list, const std::string& user, uint16_t port,
                                 const std::string& config = "none") {
  Options o;
  o.user = user;
  o.port = port;
  o.ssh_config_file = config;
  const ReachPlanner planner(o, "/nonexistent-home", "carol");
  std::vector<std::string> out;
  for (const Worker& w : tpush::inventory::workers_from_host_lists({list}, {}, {})) {
    const Reach r = planner.plan(w);
    out.push_back(r.user.value + "@" + r.hostname.value + ":" + std::to_string(r.port.value) + " (" + r.user.from +
                  ", " + r.port.from + ")");
  }
  return out;
}

}  // namespace

TEST_CASE("worker reach: a user@ in the host list wins over -l, which is the default for the others") {
  // pdsh -l alice -w bob@h1,h2 runs as bob on h1 and as alice on h2.
  CHECK(reached("bob@h1,h2", "alice", 0) ==
        std::vector<std::string>{"bob@h1:22 (host list, default)", "alice@h2:22 (-l, default)"});
  CHECK(reached("bob@h1,h2", "", 0) ==
        std::vector<std::string>{"bob@h1:22 (host list, default)", "carol@h2:22 ($USER, default)"});
}

TEST_CASE("worker reach: a :port in the host list wins over -p, which is the default for the others") {
  CHECK(reached("a,b:1", "", 2222) ==
        std::vector<std::string>{"carol@a:2222 ($USER, -p)", "carol@b:1 ($USER, host list)"});
  CHECK(reached("bob@[::1]:2200,[::2]", "alice", 2222) ==
        std::vector<std::string>{"bob@::1:2200 (host list, host list)", "alice@::2:2222 (-l, -p)"});
}

TEST_CASE("worker reach: ssh_config's User and Port apply below the host list and the flags") {
  tpush::test::TempDir dir;
  const auto config = dir.write("config", "Host *\n  User cfguser\n  Port 2022\n").string();
  const auto at = config + ":2";
  const auto port_at = config + ":3";
  CHECK(reached("a,bob@b:1", "", 0, config) ==
        std::vector<std::string>{"cfguser@a:2022 (" + at + ", " + port_at + ")", "bob@b:1 (host list, host list)"});
  CHECK(reached("a,bob@b:1", "alice", 2222, config) ==
        std::vector<std::string>{"alice@a:2222 (-l, -p)", "bob@b:1 (host list, host list)"});
}

TEST_CASE("worker reach: -l wins over a user tpush found for a worker (OS Login), which no list names") {
  Worker w;
  w.label = "w0";
  w.target.host = "10.0.0.1";
  w.target.user = "alice_example_com";
  w.user_from = "OS Login profile";
  Options o;
  o.ssh_config_file = "none";
  const Reach found = ReachPlanner(o, "/nonexistent-home", "carol").plan(w);
  CHECK(found.user.value == "alice_example_com");
  CHECK(found.user.from == "OS Login profile");
  o.user = "root";
  const Reach explicit_l = ReachPlanner(o, "/nonexistent-home", "carol").plan(w);
  CHECK(explicit_l.user.value == "root");
  CHECK(explicit_l.user.from == "-l");
}
