// SshConfig: resolving hosts, where each value came from, OpenSSH's
// defaults, relative Includes (which the oracle test cannot do without
// touching the real ~/.ssh), and the cost per host.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "test_support.h"
#include "tpush/ssh_config/config.h"
#include "tpush/util/error.h"

namespace fs = std::filesystem;
using namespace tpush::ssh_config;
using tpush::test::TempDir;

namespace {

struct Home {
  TempDir dir;
  std::string home() const { return dir.path().string(); }
  fs::path write(const std::string& relative, const std::string& text) {
    const fs::path path = dir.path() / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
    fs::permissions(path, fs::perms(0644));
    return path;
  }
  // ~/.ssh/config holding `text`, read as ssh reads it by default.
  SshConfig load(const std::string& text, std::vector<std::string> options = {}) {
    write(".ssh/config", text);
    SshConfigSources sources{std::move(options), {{dir.path() / ".ssh/config", ConfigScope::user}},
                             dir.path(), "me"};
    const SshConfig config = SshConfig::load(sources);
    REQUIRE_MESSAGE(config.errors().empty(), config.errors().front());
    return config;
  }
};

HostQuery query(std::string host) { return HostQuery{std::move(host), {}, {}}; }

}  // namespace

TEST_CASE("ssh_config: each value says where it came from, unset stays unset") {
  Home h;
  const SshConfig config = h.load(
      "Host web1\n"
      "  HostName 10.0.0.1\n"
      "  User deploy\n"
      "Host *\n"
      "  IdentityFile ~/.ssh/id_%h\n",
      {"ConnectTimeout=5"});
  const HostConfig c = config.resolve(query("web1"));
  CHECK(c.errors.empty());
  CHECK(c.host == "web1");
  CHECK(c.hostname.value == "10.0.0.1");
  CHECK(c.hostname.origin.to_string() == "~/.ssh/config:2");
  CHECK(c.hostname.origin.kind == ConfigOrigin::Kind::file);
  CHECK(c.user.value == "deploy");
  CHECK(c.connect_timeout.value == 5);
  CHECK(c.connect_timeout.origin.to_string() == "-o");
  REQUIRE(c.identity_files.size() == 1);
  CHECK(c.identity_files[0].written == "~/.ssh/id_%h");
  CHECK(c.identity_files[0].path == h.home() + "/.ssh/id_10.0.0.1");
  CHECK(c.identity_files[0].origin.to_string() == "~/.ssh/config:5");
  // Nothing set these: tpush's own defaults apply.
  CHECK_FALSE(c.port.is_set());
  CHECK(c.port.origin.to_string() == "unset");
  CHECK_FALSE(c.strict_host_key_checking.is_set());
  CHECK_FALSE(c.proxy.is_set());
  CHECK_FALSE(c.user_known_hosts_files.is_set());

  // OpenSSH's defaults, for the comparison with ssh -G.
  const HostConfig d = config.with_openssh_defaults(c);
  CHECK(d.port.value == 22);
  CHECK(d.port.origin.to_string() == "default");
  CHECK(d.user.origin.to_string() == "~/.ssh/config:3");
  CHECK(d.strict_host_key_checking.value == StrictHostKeyChecking::ask);
  CHECK(d.user_known_hosts_files.value ==
        std::vector<std::string>{h.home() + "/.ssh/known_hosts", h.home() + "/.ssh/known_hosts2"});
  CHECK(d.global_known_hosts_files.value ==
        std::vector<std::string>{"/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"});
  CHECK(d.server_alive_interval.value == 0);
  CHECK(d.server_alive_count_max.value == 3);
  CHECK(d.connection_attempts.value == 1);
  CHECK(d.address_family.value == AddressFamily::any);
  CHECK_FALSE(d.proxy.is_set());
  CHECK_FALSE(d.identity_agent.is_set());
  CHECK(d.identity_files.size() == 1);  // set by the config: no defaults added

  const HostConfig other = config.with_openssh_defaults(config.resolve(query("Other.Host")));
  CHECK(other.hostname.value == "other.host");
  CHECK(other.user.value == "me");
  REQUIRE(other.identity_files.size() == 1);
  CHECK(other.identity_files[0].path == h.home() + "/.ssh/id_other.host");
  const HostConfig bare = config.with_openssh_defaults(SshConfig::load({}).resolve(query("x")));
  CHECK(bare.identity_files.size() == 7);
  CHECK(bare.identity_files[0].written == "~/.ssh/id_rsa");
}

TEST_CASE("ssh_config: user and port given with the host win and are seen by Match and %r") {
  Home h;
  const SshConfig config = h.load(
      "Match user alice\n"
      "  ConnectTimeout 3\n"
      "Host db\n"
      "  User postgres\n"
      "  Port 5432\n"
      "  ProxyCommand nc -X connect %r@%h:%p\n",
      {"User=from-o"});
  HostQuery q{"db", "alice", 2222, "user@host", ":port"};
  const HostConfig c = config.resolve(q);
  CHECK(c.user.value == "alice");
  CHECK(c.user.origin.kind == ConfigOrigin::Kind::given);
  CHECK(c.user.origin.to_string() == "user@host");
  CHECK(c.port.value == 2222);
  CHECK(c.port.origin.to_string() == ":port");
  CHECK(c.connect_timeout.value == 3);
  REQUIRE(c.proxy.is_set());
  CHECK(c.proxy.value->kind == ProxySetting::Kind::command);
  CHECK(c.proxy.value->command == "nc -X connect alice@db:2222");
  CHECK(c.proxy.value->command_written == "nc -X connect %r@%h:%p");
  // Without them, -o comes first.
  const HostConfig plain = config.resolve(query("db"));
  CHECK(plain.user.value == "from-o");
  CHECK(plain.user.origin.to_string() == "-o");
  CHECK(plain.port.value == 5432);
}

TEST_CASE("ssh_config: ProxyJump and ProxyCommand, whichever comes first") {
  Home h;
  const SshConfig config = h.load(
      "Host j\n  ProxyJump admin@gw:2222\n"
      "Host c\n  ProxyCommand ssh -W %h:%p gw\n"
      "Host n\n  ProxyJump none\n"
      "Host m\n  ProxyCommand none\n"
      "Host *\n  ProxyCommand late %h\n  ProxyJump late-gw\n");
  const HostConfig j = config.resolve(query("j"));
  REQUIRE(j.proxy.is_set());
  CHECK(j.proxy.value->kind == ProxySetting::Kind::jump);
  CHECK(j.proxy.value->jump.display == "admin@gw:2222");
  REQUIRE(j.proxy.value->jump.hops.size() == 1);
  CHECK(j.proxy.value->jump.hops[0].port == 2222);
  CHECK(j.proxy.origin.to_string() == "~/.ssh/config:2");
  CHECK(config.resolve(query("c")).proxy.value->command == "ssh -W c:22 gw");
  // ProxyJump none stops later ProxyJumps only (Debian's ssh, OpenSSH 10.3's rule).
  const HostConfig n = config.resolve(query("n"));
  CHECK(n.proxy.value->kind == ProxySetting::Kind::command);
  CHECK(n.proxy.value->command == "late n");
  const HostConfig m = config.resolve(query("m"));
  CHECK(m.proxy.value->kind == ProxySetting::Kind::none);
  CHECK(m.proxy.origin.to_string() == "~/.ssh/config:8");
  const HostConfig other = config.resolve(query("other"));
  CHECK(other.proxy.value->kind == ProxySetting::Kind::command);
}

TEST_CASE("ssh_config: errors that belong to one host") {
  Home h;
  const SshConfig config = h.load(
      "Host covered\n"
      "  IgnoreUnknown UseKeychain\n"
      "Host *\n"
      "  UseKeychain yes\n"
      "Host badtoken\n"
      "  HostName %h.%u.example\n"
      "  IdentityFile ~/.ssh/%x\n"
      "Host zero\n"
      "  ConnectionAttempts 0\n"
      "Host loop\n"
      "  ProxyJump loop\n");
  CHECK(config.resolve(query("covered")).errors.empty());
  const HostConfig u = config.resolve(query("uncovered"));
  REQUIRE(u.errors.size() == 1);
  CHECK(u.errors[0] ==
        "~/.ssh/config:4: unknown keyword \"usekeychain\"; ssh refuses it too. If a newer ssh knows it, write "
        "\"IgnoreUnknown usekeychain\" above this line");
  const HostConfig b = config.resolve(query("badtoken"));
  REQUIRE(b.errors.size() == 3);
  CHECK(b.errors[0].ends_with("unknown keyword \"usekeychain\"; ssh refuses it too. If a newer ssh knows it, write "
                              "\"IgnoreUnknown usekeychain\" above this line"));
  CHECK(b.errors[1] == "~/.ssh/config:6: HostName \"%h.%u.example\": unknown token %u (here OpenSSH knows %h, %%)");
  CHECK(b.errors[2] ==
        "~/.ssh/config:7: IdentityFile \"~/.ssh/%x\": unknown token %x (here OpenSSH knows %C, %L, %i, %k, %l, "
        "%n, %p, %d, %h, %r, %u, %%)");
  const HostConfig z = config.resolve(query("zero"));
  CHECK(z.errors.back() == "~/.ssh/config:9: ConnectionAttempts must be at least 1 (ssh refuses 0)");
  const HostConfig l = config.resolve(query("loop"));
  CHECK(l.errors.back() ==
        "~/.ssh/config:11: ProxyJump loop is this host itself (a loop); exclude it from the block, e.g. \"Host * "
        "!loop\"");
  const HostConfig bad = config.resolve(HostQuery{"a;b", "-oops", {}, "-l", ""});
  REQUIRE(bad.errors.size() >= 2);
  CHECK(bad.errors[bad.errors.size() - 2] ==
        "host \"a;b\": ssh refuses host names with blanks, shell metacharacters (' ` \" $ \\ ; & < > | ( ) { } ,) "
        "or a leading '-'");
  CHECK(bad.errors.back() ==
        "-l: user \"-oops\": ssh refuses user names with control characters, shell metacharacters or a leading '-'");
}

TEST_CASE("ssh_config: relative Includes read ~/.ssh, only where their block applies") {
  Home h;
  h.write(".ssh/conf.d/10-web.conf", "Host web*\n  User web-user\n");
  h.write(".ssh/conf.d/20-all.conf", "Port 2020\nHost *\n  ConnectTimeout 20\n");
  h.write(".ssh/db.conf", "User db-user\n");
  const SshConfig config = h.load(
      "Include conf.d/*.conf\n"
      "Host db\n"
      "  Include db.conf\n"
      "Host *\n"
      "  User fallback\n");
  const HostConfig web = config.resolve(query("web1"));
  CHECK(web.user.value == "web-user");
  CHECK(web.user.origin.to_string() == "~/.ssh/conf.d/10-web.conf:2");
  CHECK(web.port.value == 2020);
  CHECK(web.connect_timeout.value == 20);
  const HostConfig db = config.resolve(query("db"));
  CHECK(db.user.value == "db-user");
  CHECK(db.user.origin.to_string() == "~/.ssh/db.conf:1");
  CHECK(config.resolve(query("other")).user.value == "fallback");

  // Read once: editing or removing the files afterwards changes nothing.
  fs::remove_all(h.dir.path() / ".ssh");
  CHECK(config.resolve(query("db")).user.value == "db-user");
}

TEST_CASE("ssh_config: relative Includes in the system file read /etc/ssh (here: system_dir)") {
  Home h;
  h.write("etc/ssh_config.d/a.conf", "Host *\n  User from-system-include\n");
  const fs::path sys = h.write("etc/ssh_config", "Include ssh_config.d/*.conf\n");
  SshConfigSources sources{{}, {{sys, ConfigScope::system}}, h.dir.path(), "me"};
  sources.system_dir = h.dir.path() / "etc";
  const SshConfig config = SshConfig::load(sources);
  CHECK(config.errors().empty());
  CHECK(config.resolve(query("x")).user.value == "from-system-include");
}

TEST_CASE("ssh_config: IdentityFile drops a repeat from the same kind of file only") {
  Home h;
  const fs::path user = h.write(".ssh/config", "IdentityFile ~/.ssh/a\nIdentityFile ~/.ssh/a\nIdentityFile none\n");
  const fs::path sys = h.write("etc/ssh_config", "IdentityFile ~/.ssh/a\nIdentityFile ~/.ssh/b\n");
  const SshConfig config =
      SshConfig::load({{}, {{user, ConfigScope::user}, {sys, ConfigScope::system}}, h.dir.path(), "me"});
  const HostConfig c = config.resolve(query("x"));
  std::vector<std::string> written, paths;
  for (const IdentityFileEntry& id : c.identity_files) written.push_back(id.written), paths.push_back(id.path);
  // OpenSSH keeps the system file's copy apart from the user's (its "user provided" flag).
  CHECK(written == std::vector<std::string>{"~/.ssh/a", "none", "~/.ssh/a", "~/.ssh/b"});
  CHECK(paths == std::vector<std::string>{h.home() + "/.ssh/a", "", h.home() + "/.ssh/a", h.home() + "/.ssh/b"});
  CHECK(c.identity_files[2].origin.to_string() == "~/etc/ssh_config:1");
}

TEST_CASE("ssh_config: Debian's BatchMode default for ServerAliveInterval") {
  Home h;
  const SshConfig config = h.load("Host batch\n  BatchMode yes\n");
  CHECK(config.with_openssh_defaults(config.resolve(query("batch"))).server_alive_interval.value == 300);
  CHECK(config.with_openssh_defaults(config.resolve(query("other"))).server_alive_interval.value == 0);
  CHECK_FALSE(config.resolve(query("batch")).server_alive_interval.is_set());
}

TEST_CASE("ssh_config: load_or_throw lists the errors") {
  Home h;
  h.write("bad.conf", "Port 0\nFoo bar\n");
  const SshConfigSources sources{{}, {{h.dir.path() / "bad.conf", ConfigScope::named}}, h.dir.path(), "me"};
  CHECK_THROWS_WITH_AS(SshConfig::load_or_throw(sources),
                       "ssh config: ~/bad.conf:1: Port: \"0\" is not a port; use a number from 1 to 65535 or a "
                       "service name\n  ~/bad.conf:2: unknown keyword \"foo\"; ssh refuses it too. If a newer ssh "
                       "knows it, write \"IgnoreUnknown foo\" above this line",
                       tpush::UsageError);
}

TEST_CASE("ssh_config: thousands of hosts cost one read and a walk each") {
  Home h;
  std::string text;
  for (int i = 0; i < 200; ++i)
    text += "Host rack" + std::to_string(i) + "-*\n  User u" + std::to_string(i) + "\n  IdentityFile ~/.ssh/k" +
            std::to_string(i) + "\n";
  text += "Match originalhost *-7 !user u3\n  Port 7777\nHost *\n  ProxyCommand nc %h %p\n";
  const SshConfig config = h.load(text);
  const auto start = std::chrono::steady_clock::now();
  std::vector<HostConfig> hosts;
  for (int i = 0; i < 4000; ++i) hosts.push_back(config.resolve(query("rack" + std::to_string(i % 200) + "-" +
                                                                     std::to_string(i))));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  MESSAGE("4000 hosts against " << 200 * 3 + 4 << " lines: " << seconds << " s");
  CHECK(seconds < 10.0);  // generous: about 0.1 s in a normal build
  CHECK(hosts[3].user.value == "u3");
  CHECK(hosts[7].port.value == 7777);
  CHECK_FALSE(hosts[3].port.is_set());  // "rack3-3" does not end in -7
  CHECK(hosts[4007 % 4000].identity_files[0].path == h.home() + "/.ssh/k7");

  // resolve() is const and may run on several threads.
  std::vector<std::thread> threads;
  std::vector<std::string> users(4);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] { users[t] = *config.resolve(query("rack" + std::to_string(t) + "-x")).user.value; });
  for (std::thread& t : threads) t.join();
  CHECK(users == std::vector<std::string>{"u0", "u1", "u2", "u3"});
}

namespace {

// Everything resolve() gives but the queried name, with origins.
std::string described(const HostConfig& c) {
  std::string out;
  const auto field = [&](const char* name, const auto& f, const auto& show) {
    out += std::string(name) + "=" + (f.is_set() ? show(*f.value) + "@" + f.origin.to_string() : "unset") + ";";
  };
  const auto text = [](const std::string& s) { return s; };
  const auto number = [](auto n) { return std::to_string(static_cast<long long>(n)); };
  const auto list = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& e : v) s += e + ",";
    return s;
  };
  field("hostname", c.hostname, text);
  field("user", c.user, text);
  field("port", c.port, number);
  for (const auto& id : c.identity_files) out += "id=" + id.path + "|" + id.written + "@" + id.origin.to_string() + ";";
  field("identities_only", c.identities_only, number);
  field("identity_agent", c.identity_agent, text);
  field("proxy", c.proxy, [](const ProxySetting& p) {
    return std::to_string(static_cast<int>(p.kind)) + "|" + p.command + "|" + p.command_written + "|" + p.jump.display;
  });
  field("connect_timeout", c.connect_timeout, number);
  field("alive", c.server_alive_interval, number);
  field("alive_count", c.server_alive_count_max, number);
  field("strict", c.strict_host_key_checking, number);
  field("user_known", c.user_known_hosts_files, list);
  field("global_known", c.global_known_hosts_files, list);
  field("alias", c.host_key_alias, text);
  field("family", c.address_family, number);
  field("attempts", c.connection_attempts, number);
  field("batch", c.batch_mode, number);
  for (const auto& e : c.errors) out += "error=" + e + ";";
  return out;
}

}  // namespace

TEST_CASE("ssh_config: queries with the same sharing key resolve alike but for their name") {
  Home h;
  h.write(".ssh/extra.conf", "Host inc*\n  User from-include\n");
  const SshConfig config = h.load(
      "Host * !unk*\n  IgnoreUnknown UseKeychain\n"  // an unknown keyword is an error where none covers it
      "Host bastion\n  HostName gw.example.com\n  User ops\n"
      "Host web* !web9\n  User deploy\n  IdentityFile ~/.ssh/web\n"
      "Host tok*\n  IdentityFile ~/.ssh/id_%h\n"
      "Host agent*\n  IdentityAgent ~/.ssh/agent-%n\n"
      "Host known*\n  UserKnownHostsFile ~/.ssh/kh %d/kh2\n"
      "Host pc*\n  ProxyCommand nc %h %p\n"
      "Host named*\n  HostName fixed.example.com\n"
      "Host hn*\n  HostName %h.internal\n"
      "Host jump*\n  ProxyJump bastion\n"
      "Host self*\n  ProxyJump self1\n"
      "Match host fixed.example.com\n  Port 2202\n"
      "Match originalhost WEB* user root\n  ConnectTimeout 7\n"
      "Match localuser me !user alice\n  ServerAliveInterval 9\n"
      "Host unk*\n  UseKeychain yes\n"
      "Include extra.conf\n"
      "Host *\n  IdentityFile ~/.ssh/id_ed25519\n  Compression no\n");
  std::vector<std::string> hosts;
  for (const char* base : {"web", "WEB", "tok", "agent", "known", "pc", "named", "hn", "jump", "self", "unk", "inc",
                           "other", "db"})
    for (int i = 0; i < 10; ++i) hosts.push_back(base + std::to_string(i));
  for (const char* odd : {"127.1", "0x7f.1", "::1", "fe80::1%eth0", "a;b", "-x", "bastion", "BASTION", "Web1"})
    hosts.push_back(odd);
  std::vector<HostQuery> queries;
  for (const auto& host : hosts) {
    queries.push_back(query(host));
    queries.push_back(HostQuery{host, "root", {}, "-l", ""});
    queries.push_back(HostQuery{host, "alice", 2222, "host list", "host list"});
    queries.push_back(HostQuery{host, {}, 2222, "", "-p"});
  }
  std::map<std::string, std::string> seen;  // key -> described, of the first query with it
  std::size_t keyed = 0;
  for (const HostQuery& q : queries) {
    const std::optional<std::string> key = config.sharing_key(q);
    if (!key) continue;
    ++keyed;
    HostConfig c = config.resolve(q);
    CHECK(c.errors.empty());
    CHECK(c.host == q.host);
    const std::string d = described(c);
    const auto [it, first] = seen.emplace(*key, d);
    if (!first) CHECK_MESSAGE(it->second == d, q.host);
  }
  CHECK(keyed > queries.size() / 2);
  // Who shares and who cannot.
  const auto key = [&](const std::string& host) { return config.sharing_key(query(host)); };
  CHECK(key("web1").has_value());
  CHECK(key("web1") == key("web2"));
  CHECK(key("web1") != key("web9"));  // !web9
  CHECK(key("web1") != key("WEB1"));  // Host is case-sensitive, Match originalhost is not: other lines apply
  CHECK(config.sharing_key(HostQuery{"web1", "root", {}, "-l", ""}) !=
        config.sharing_key(HostQuery{"web1", "root", {}, "host list", ""}));  // the origin differs
  CHECK(key("named1") == key("named2"));  // the same HostName (and Match host), whatever the name
  CHECK(key("jump1") == key("jump2"));    // through bastion
  CHECK(key("other1") == key("db1"));
  // A name that may be an address shares too: without a HostName it is not rewritten.
  CHECK(key("127.1") == key("other1"));
  for (const char* alone : {"tok1", "agent1", "known1", "pc1", "hn1", "self1", "unk1", "a;b", "-x"})
    CHECK_MESSAGE(!key(alone).has_value(), alone);
  CHECK(config.sharing_key(HostQuery{"db1", "-oops", {}, "-l", ""}) == std::nullopt);
}
