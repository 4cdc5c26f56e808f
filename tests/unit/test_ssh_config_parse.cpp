// Reading ssh_config files: errors and warnings (messages asserted),
// Includes, permissions.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "test_support.h"
#include "tpush/ssh_config/parse.h"

namespace fs = std::filesystem;
using namespace tpush::ssh_config;
using tpush::test::TempDir;

namespace {

// A temp dir that is also the home directory, so paths show as "~/...".
struct ParseHome {
  TempDir dir;
  fs::path write(const std::string& relative, const std::string& text, fs::perms mode = fs::perms(0644)) {
    const fs::path path = dir.path() / relative;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
    fs::permissions(path, mode);
    return path;
  }
  ParsedConfig parse(std::vector<ConfigFile> files, std::vector<std::string> options = {}) {
    SshConfigSources sources{std::move(options), std::move(files), dir.path(), "me"};
    sources.system_dir = dir.path() / "etc";
    return parse_ssh_config(sources);
  }
  ParsedConfig parse_text(const std::string& text) {
    return parse({ConfigFile{write("cfg", text), ConfigScope::named}});
  }
};

std::size_t count(const ParsedConfig& p, ConfigDirective::Kind kind) {
  std::size_t n = 0;
  for (const ConfigDirective& d : p.directives) n += d.kind == kind;
  return n;
}

}  // namespace

TEST_CASE("ssh_config parse: errors name file:line, what and the fix") {
  ParseHome home;
  const ParsedConfig p = home.parse_text(
      "Host a\n"
      "  Hostnme x\n"
      "  Port 0\n"
      "  User\n"
      "  IdentityFile \"/unterminated\n"
      "Match host\n"
      "Match exec\n"
      "Match all host x\n"
      "Match host a user\n"
      "Match\tfoo=bar extra  \n"
      "Host \"\"\n");
  REQUIRE(p.errors.size() == 10);
  CHECK(p.errors[0] ==
        "~/cfg:2: unknown keyword \"hostnme\" (did you mean \"HostName\"?); ssh refuses it too. If a newer ssh "
        "knows it, write \"IgnoreUnknown hostnme\" above this line");
  CHECK(p.errors[1] == "~/cfg:3: Port: \"0\" is not a port; use a number from 1 to 65535 or a service name");
  CHECK(p.errors[2] == "~/cfg:4: no argument after keyword \"user\"");
  CHECK(p.errors[3] == "~/cfg:5: unbalanced quotes; close the quote");
  CHECK(p.errors[4] == "~/cfg:6: Match: \"host\" needs a pattern, e.g. \"Match host example*\"");
  CHECK(p.errors[5] == "~/cfg:7: Match: \"exec\" needs an argument");
  CHECK(p.errors[6] == "~/cfg:8: Match: \"all\" cannot be combined with other criteria; remove it or them");
  CHECK(p.errors[7] == "~/cfg:9: Match: \"user\" needs a pattern, e.g. \"Match user example*\"");
  // An unknown criterion is taken to have an argument, like every newer one.
  CHECK(p.errors[8] == "~/cfg:10: Match: \"extra\" needs an argument");
  CHECK(p.errors[9] == "~/cfg:11: Host: empty pattern; remove the \"\"");
}

TEST_CASE("ssh_config parse: -o lines") {
  ParseHome home;
  const ParsedConfig p = home.parse({}, {"Host=x", "Port=0", "Include /etc/x", "User=fine", "Match all",
                                         "ProxyJump=a;b@gw", "# a comment is fine", "UseKeychain yes"});
  REQUIRE(p.errors.size() == 6);
  CHECK(p.errors[0] == "-o \"Host=x\": Host cannot be given with -o; put it in a config file");
  CHECK(p.errors[1] == "-o \"Port=0\": Port: \"0\" is not a port; use a number from 1 to 65535 or a service name");
  CHECK(p.errors[2] == "-o \"Include /etc/x\": Include cannot be given with -o; put it in a config file");
  CHECK(p.errors[3] == "-o \"Match all\": Match cannot be given with -o; put it in a config file");
  CHECK(p.errors[4] ==
        "-o \"ProxyJump=a;b@gw\": ProxyJump: \"a;b@gw\" has characters ssh refuses on its command line (shell "
        "metacharacters, blanks)");
  CHECK(p.errors[5].starts_with("-o \"UseKeychain yes\": unknown keyword \"usekeychain\""));
}

TEST_CASE("ssh_config parse: warnings for what tpush does not do") {
  ParseHome home;
  const ParsedConfig p = home.parse_text(
      "Match exec \"test -f /x\" host a\n"
      "Match canonical final\n"
      "Match tagged prod localnetwork 10.0.0.0/8\n"
      "Match foo=bar\n"
      "Host *\n"
      "  RSAAuthentication yes\n"
      "  CanonicalizeHostname yes\n"
      "  CanonicalizeHostname no\n");
  CHECK(p.errors.empty());
  REQUIRE(p.warnings.size() == 6);
  constexpr const char* kWhy =
      ": not supported by tpush (it runs no commands and does no canonicalization; criteria newer than OpenSSH "
      "9.2 are unknown); this block never applies";
  CHECK(p.warnings[0] == std::string("~/cfg:1: Match exec test -f /x") + kWhy);
  CHECK(p.warnings[1] == std::string("~/cfg:2: Match canonical, final") + kWhy);
  CHECK(p.warnings[2] == std::string("~/cfg:3: Match tagged prod, localnetwork 10.0.0.0/8") + kWhy);
  CHECK(p.warnings[3] == std::string("~/cfg:4: Match foo bar") + kWhy);
  CHECK(p.warnings[4] ==
        "~/cfg:6: RSAAuthentication is no longer supported by OpenSSH, which ignores it; remove the line");
  CHECK(p.warnings[5] ==
        "~/cfg:7: CanonicalizeHostname yes is not supported by tpush: host names are used as written, without "
        "the DNS lookup and second pass ssh would do");
  CHECK(count(p, ConfigDirective::Kind::match) == 4);
  for (const ConfigDirective& d : p.directives)
    if (d.kind == ConfigDirective::Kind::match) CHECK(d.never);
}

TEST_CASE("ssh_config parse: which files are read") {
  ParseHome home;
  // ssh_config_files: -F alone, -F none, or the two defaults.
  CHECK(ssh_config_files("/h", std::string("none")).empty());
  CHECK(ssh_config_files("/h", std::string("NONE")).empty());
  const std::vector<ConfigFile> f = ssh_config_files("/h", std::string("/x/cfg"));
  REQUIRE(f.size() == 1);
  CHECK(f[0].path == "/x/cfg");
  CHECK(f[0].scope == ConfigScope::named);
  const std::vector<ConfigFile> d = ssh_config_files("/h");
  REQUIRE(d.size() == 2);
  CHECK(d[0].path == "/h/.ssh/config");
  CHECK(d[0].scope == ConfigScope::user);
  CHECK(d[1].path == "/etc/ssh/ssh_config");
  CHECK(d[1].scope == ConfigScope::system);

  // A missing default file is skipped; a missing -F file is an error.
  CHECK(home.parse({{home.dir.path() / ".ssh/config", ConfigScope::user}}).errors.empty());
  const ParsedConfig p = home.parse({{home.dir.path() / "nope", ConfigScope::named}});
  REQUIRE(p.errors.size() == 1);
  CHECK(p.errors[0] == "~/nope: cannot open: No such file or directory (check the path given with -F)");
}

TEST_CASE("ssh_config parse: relative Includes are under ~/.ssh, or /etc/ssh for the system file") {
  ParseHome home;
  home.write(".ssh/config.d/b.conf", "Port 2\n");
  home.write(".ssh/config.d/a.conf", "Port 1\n");
  home.write("etc/sys.d/s.conf", "Port 3\n");
  const fs::path user = home.write(".ssh/config", "Include config.d/*.conf\nInclude ~/.ssh/config.d/a.conf\n");
  const fs::path sys = home.write("etc/ssh_config", "Include sys.d/*\nInclude ~/x\n");
  const ParsedConfig p = home.parse({{user, ConfigScope::user}, {sys, ConfigScope::system}});
  REQUIRE(p.errors.size() == 1);
  CHECK(p.errors[0] == "~/etc/ssh_config:2: Include: \"~/x\": ~ is not allowed in the system config; use an "
                       "absolute path");
  std::vector<std::string> read;
  for (const ConfigDirective& d : p.directives)
    if (d.kind == ConfigDirective::Kind::set) read.push_back(p.sources[d.source]);
  CHECK(read == std::vector<std::string>{"~/.ssh/config.d/a.conf", "~/.ssh/config.d/b.conf",
                                         "~/.ssh/config.d/a.conf", "~/etc/sys.d/s.conf"});
  CHECK(count(p, ConfigDirective::Kind::include_start) == 4);
  CHECK(count(p, ConfigDirective::Kind::include_end) == 4);
}

TEST_CASE("ssh_config parse: an Include loop stops after 16 levels") {
  ParseHome home;
  const fs::path loop = home.write("loop.conf", "Include ~/loop.conf\n");
  const ParsedConfig p = home.parse({{loop, ConfigScope::named}});
  REQUIRE(p.errors.size() == 1);
  CHECK(p.errors[0] == "~/loop.conf:1: Include: more than 16 levels of Include (does a file include itself?) at "
                       "\"~/loop.conf\"");
  CHECK(count(p, ConfigDirective::Kind::include_start) == 16);
}

TEST_CASE("ssh_config parse: ssh refuses user config files others may write") {
  ParseHome home;
  const fs::path config = home.write(".ssh/config", "Include ~/inc.conf\n", fs::perms(0666));
  home.write("inc.conf", "Port 1\n", fs::perms(0646));
  ParsedConfig p = home.parse({{config, ConfigScope::user}});
  REQUIRE(p.errors.size() == 1);
  CHECK(p.errors[0] == "~/.ssh/config: bad owner or permissions: ssh refuses a config file others may write; "
                       "fix with `chmod go-w ~/.ssh/config` (and make it yours)");
  // -F files are not checked, but what they include is.
  p = home.parse({{config, ConfigScope::named}});
  REQUIRE(p.errors.size() == 1);
  CHECK(p.errors[0].starts_with("~/inc.conf: bad owner or permissions"));
  fs::permissions(home.dir.path() / "inc.conf", fs::perms(0644));
  CHECK(home.parse({{config, ConfigScope::named}}).errors.empty());
  // Owned by someone else (only root can arrange that here).
  if (::getuid() == 0) {
    fs::permissions(config, fs::perms(0644));
    REQUIRE(::chown(config.c_str(), 65534, 65534) == 0);
    p = home.parse({{config, ConfigScope::user}});
    REQUIRE(p.errors.size() == 1);
    CHECK(p.errors[0].starts_with("~/.ssh/config: bad owner or permissions"));
  }
}

TEST_CASE("ssh_config parse: an unknown keyword waits for the host only if an IgnoreUnknown may cover it") {
  ParseHome home;
  ParsedConfig p = home.parse_text("Host a\n  IgnoreUnknown Use*\nHost *\n  UseKeychain yes\n  Fancy 1\n");
  REQUIRE(p.errors.size() == 1);
  CHECK(p.errors[0].starts_with("~/cfg:5: unknown keyword \"fancy\""));
  CHECK(count(p, ConfigDirective::Kind::unknown) == 1);
  // Too late: ssh reads IgnoreUnknown before it meets the keyword.
  p = home.parse_text("UseKeychain yes\nIgnoreUnknown UseKeychain\n");
  REQUIRE(p.errors.size() == 1);
  CHECK(p.errors[0].starts_with("~/cfg:1: unknown keyword \"usekeychain\""));
  // Covered, yet its quotes are still checked.
  p = home.parse_text("IgnoreUnknown *\nFancy \"open\n");
  REQUIRE(p.errors.size() == 1);
  CHECK(p.errors[0] == "~/cfg:2: unbalanced quotes; close the quote");
}
