// The ssh_config tpush writes for OpenSSH's ssh (tpush rsync): `ssh -G` on it
// must give back what tpush settled for each worker (commands/openssh_config).
#include <doctest/doctest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.h"
#include "tpush/commands/plan/openssh_config.h"
#include "tpush/commands/plan/worker_reach.h"
#include "tpush/inventory/worker.h"
#include "tpush/util/shell_quote.h"

namespace {

using namespace tpush::commands;
using tpush::inventory::Worker;
using tpush::test::TempDir;

std::map<std::string, std::vector<std::string>> ssh_g(const std::filesystem::path& cfg, const std::string& host) {
  const auto r = tpush::test::run_shell("ssh -G -F " + tpush::util::shell_quote(cfg.string()) + " " +
                                        tpush::util::shell_quote(host) + " 2>&1 </dev/null");
  REQUIRE_MESSAGE(r.status == 0, r.out);
  std::map<std::string, std::vector<std::string>> out;
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    const auto sp = line.find(' ');
    out[line.substr(0, sp)].push_back(sp == std::string::npos ? "" : line.substr(sp + 1));
  }
  return out;
}

Worker worker(const std::string& host) {
  Worker w;
  w.target.host = host;
  w.label = host;
  return w;
}

}  // namespace

TEST_CASE("openssh config: ssh -G reads back what tpush settled, jump hosts and proxies included") {
  TempDir dir;
  const auto cfg_in = dir / "config";
  {
    std::ofstream f(cfg_in);
    f << "Host plain\n  HostName 10.1.2.3\n  Port 2222\n  User alice\n  IdentityFile " << (dir / "k1").string()
      << "\n  IdentitiesOnly yes\n  ConnectTimeout 7\n  ServerAliveInterval 9\n  ServerAliveCountMax 4\n"
      << "  StrictHostKeyChecking yes\n  UserKnownHostsFile " << (dir / "kh").string() << "\n  HostKeyAlias myalias\n"
      << "  AddressFamily inet\n  ConnectionAttempts 3\n"
      << "Host jumped\n  ProxyJump bob@bastion:2200,carol@inner\n"
      << "Host proxied\n  ProxyCommand relay.sh --to %h:%p 50%%\n"
      << "Host zoned\n  HostName fe80::1%%eth0\n"
      << "Host bastion\n  HostName 192.0.2.1\n  IdentityFile " << (dir / "kb").string() << "\n";
  }
  Options o;
  o.ssh_config_file = cfg_in.string();
  const ReachPlanner planner(o, dir.path(), "local");
  std::vector<Reach> reaches;
  for (const char* h : {"plain", "jumped", "proxied", "zoned"}) reaches.push_back(planner.plan(worker(h)));
  std::vector<OpenSshHost> hosts;
  for (std::size_t i = 0; i < reaches.size(); ++i) hosts.push_back({"tpush-w" + std::to_string(i), &reaches[i], "", {}});
  const auto cfg_out = dir / "out";
  std::ofstream(cfg_out) << openssh_config(hosts, "");

  auto plain = ssh_g(cfg_out, "tpush-w0");
  CHECK(plain["hostname"] == std::vector<std::string>{"10.1.2.3"});
  CHECK(plain["port"] == std::vector<std::string>{"2222"});
  CHECK(plain["user"] == std::vector<std::string>{"alice"});
  CHECK(plain["identityfile"] == std::vector<std::string>{(dir / "k1").string()});
  CHECK(plain["identitiesonly"] == std::vector<std::string>{"yes"});
  CHECK(plain["connecttimeout"] == std::vector<std::string>{"7"});
  CHECK(plain["serveraliveinterval"] == std::vector<std::string>{"9"});
  CHECK(plain["serveralivecountmax"] == std::vector<std::string>{"4"});
  CHECK(plain["stricthostkeychecking"] == std::vector<std::string>{"true"});
  CHECK(plain["userknownhostsfile"] == std::vector<std::string>{(dir / "kh").string()});
  CHECK(plain["hostkeyalias"] == std::vector<std::string>{"myalias"});
  CHECK(plain["addressfamily"] == std::vector<std::string>{"inet"});
  CHECK(plain["connectionattempts"] == std::vector<std::string>{"3"});

  // Each jump host gets a Host block of its own, with its own settings.
  auto jumped = ssh_g(cfg_out, "tpush-w1");
  REQUIRE(jumped["proxyjump"].size() == 1);
  const std::string chain = jumped["proxyjump"][0];
  const auto comma = chain.find(',');
  REQUIRE(comma != std::string::npos);
  auto first = ssh_g(cfg_out, chain.substr(0, comma));
  CHECK(first["hostname"] == std::vector<std::string>{"192.0.2.1"});
  CHECK(first["port"] == std::vector<std::string>{"2200"});
  CHECK(first["user"] == std::vector<std::string>{"bob"});
  CHECK(first["identityfile"] == std::vector<std::string>{(dir / "kb").string()});
  auto second = ssh_g(cfg_out, chain.substr(comma + 1));
  CHECK(second["hostname"] == std::vector<std::string>{"inner"});
  CHECK(second["user"] == std::vector<std::string>{"carol"});

  // Tokens tpush expanded already are not expanded twice: % is written %%
  // (ssh -G shows ProxyCommand before expanding it; ssh then runs "50%").
  auto proxied = ssh_g(cfg_out, "tpush-w2");
  CHECK(proxied["proxycommand"] == std::vector<std::string>{"relay.sh --to proxied:22 50%%"});
  auto zoned = ssh_g(cfg_out, "tpush-w3");
  CHECK(zoned["hostname"] == std::vector<std::string>{"fe80::1%eth0"});
}
