// Values checked as OpenSSH checks them; messages say what and how to fix.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "tpush/ssh_config/values.h"

using namespace tpush::ssh_config;

namespace {
// "" when the line is fine, else the message.
std::string check(const std::string& text, ConfigValue* out = nullptr) {
  ConfigLine line;
  REQUIRE(split_config_line(text, line).empty());
  const KeywordInfo* kw = find_keyword(line.keyword);
  REQUIRE(kw != nullptr);
  ConfigValue value;
  std::string err = check_value(*kw, line, value);
  if (out) *out = value;
  return err;
}
}  // namespace

TEST_CASE("ssh_config values: what tpush resolves") {
  ConfigValue v;
  CHECK(check("Port 2222", &v).empty());
  CHECK(v.number == 2222);
  CHECK(check("StrictHostKeyChecking accept-new", &v).empty());
  CHECK(v.number == static_cast<int>(StrictHostKeyChecking::accept_new));
  CHECK(check("StrictHostKeyChecking OFF", &v).empty());
  CHECK(v.number == static_cast<int>(StrictHostKeyChecking::no));
  CHECK(check("AddressFamily inet6", &v).empty());
  CHECK(v.number == static_cast<int>(AddressFamily::inet6));
  CHECK(check("ConnectTimeout 1h30m", &v).empty());
  CHECK(v.number == 5400);
  CHECK(check("ConnectTimeout none", &v).empty());
  CHECK(v.number == -1);
  CHECK(check("ServerAliveCountMax +3", &v).empty());
  CHECK(v.number == 3);
  CHECK(check("IdentitiesOnly yes", &v).empty());
  CHECK(v.number == 1);
  CHECK(check("UserKnownHostsFile /a /b", &v).empty());
  CHECK(v.list == std::vector<std::string>{"/a", "/b"});
  CHECK(check("ProxyCommand = nc %h %p # via nc", &v).empty());
  CHECK(v.text == "nc %h %p # via nc");
  CHECK(check("ProxyJump u@gw:2200", &v).empty());
  CHECK(v.jump.display == "u@gw:2200");
}

TEST_CASE("ssh_config values: times") {
  CHECK(parse_config_time("90") == 90);
  CHECK(parse_config_time("1m30s") == 90);
  CHECK(parse_config_time("1W") == 604800);
  CHECK(parse_config_time("2d3h") == 2 * 86400 + 3 * 3600);
  CHECK(parse_config_time("") == -1);
  CHECK(parse_config_time("5x") == -1);
  CHECK(parse_config_time("-5") == -1);
  CHECK(parse_config_time("99999999999") == -1);
}

TEST_CASE("ssh_config values: bad values say what is wrong and the fix") {
  CHECK(check("Port 0") == "Port: \"0\" is not a port; use a number from 1 to 65535 or a service name");
  CHECK(check("Port 70000") == "Port: \"70000\" is not a port; use a number from 1 to 65535 or a service name");
  CHECK(check("Port 22 23") == "Port: takes one value; \"23\" is extra (quote a value that contains blanks)");
  CHECK(check("StrictHostKeyChecking maybe") ==
        "StrictHostKeyChecking: \"maybe\" is not a valid value; use true, false, yes, no, ask, off or accept-new");
  CHECK(check("IdentitiesOnly sure") == "IdentitiesOnly: \"sure\" is not a valid value; use true, false, yes or no");
  CHECK(check("AddressFamily ipv4") == "AddressFamily: \"ipv4\" is not a valid value; use inet, inet6 or any");
  CHECK(check("ConnectTimeout soon") ==
        "ConnectTimeout: \"soon\" is not a time; use seconds or a time such as 30s, 5m, 1h30m (or none)");
  CHECK(check("ConnectionAttempts many") ==
        "ConnectionAttempts: \"many\" is not a whole number; use a whole number from 0 to 2147483647");
  CHECK(check("ServerAliveCountMax -1") ==
        "ServerAliveCountMax: \"-1\" is negative; use a whole number from 0 to 2147483647");
  CHECK(check("User # nobody") == "User: missing value");
  CHECK(check("User \"\"") == "User: missing value");
  CHECK(check("HostName a b") == "HostName: takes one value; \"b\" is extra (quote a value that contains blanks)");
  CHECK(check("UserKnownHostsFile none /x") ==
        "UserKnownHostsFile: \"none\" must be the only value; remove it or the others");
  CHECK(check("ProxyJump @gw") ==
        "ProxyJump: \"@gw\" is not [user@]host[:port] or ssh://[user@]host[:port]");
  ::unsetenv("TPUSH_VALUES_UNSET");
  CHECK(check("IdentityAgent ${TPUSH_VALUES_UNSET}") ==
        "IdentityAgent: environment variable ${TPUSH_VALUES_UNSET} is not set");
  CHECK(check("IdentityAgent $not-a-name") ==
        "IdentityAgent: \"$not-a-name\" is no environment variable name; write $NAME or ${NAME}");
}

TEST_CASE("ssh_config values: keywords tpush ignores are still checked") {
  CHECK(check("Ciphers aes128-ctr").empty());
  CHECK(check("ForwardAgent yes").empty());
  CHECK(check("ForwardAgent /run/agent.sock").empty());
  CHECK(check("Compression maybe") == "Compression: \"maybe\" is not a valid value; use yes or no");
  CHECK(check("LogLevel debug3").empty());
  CHECK(check("LogLevel loud").starts_with("LogLevel: \"loud\" is not a valid value; use QUIET, FATAL"));
  CHECK(check("ControlPersist 10m").empty());
  CHECK(check("ControlPersist Yes") == "ControlPersist: \"Yes\" is not valid; use yes, no or a time such as 10m");
  CHECK(check("SendEnv LANG LC_*").empty());
  CHECK(check("SendEnv A=B") ==
        "SendEnv: \"A=B\" is not a variable name; SendEnv takes names, SetEnv takes NAME=VALUE");
  CHECK(check("SetEnv A") == "SetEnv: \"A\" has no '='; write NAME=VALUE");
  CHECK(check("LocalForward 8080 localhost:80").empty());
  CHECK(check("LocalForward 8080") == "LocalForward: missing target; write [bind_address:]port host:hostport");
  CHECK(check("RekeyLimit 1G 1h").empty());
  CHECK(check("RekeyLimit 8") == "RekeyLimit: \"8\" is too small; use at least 16 bytes");
  CHECK(check("IPQoS af21 cs1").empty());
  CHECK(check("IPQoS lowdelay 300").starts_with("IPQoS: \"300\" is not a DSCP value"));
  CHECK(check("EscapeChar ^A").empty());
  CHECK(check("EscapeChar ab") == "EscapeChar: \"ab\" is not an escape character; use one character, ^X or none");
  CHECK(check("AddKeysToAgent confirm 5m").empty());
  CHECK(check("AddKeysToAgent 1h").empty());
  CHECK(check("AddKeysToAgent yes 5m") == "AddKeysToAgent: use yes, no, ask, confirm [time] or a time such as 30m");
  CHECK(check("TunnelDevice any:3").empty());
  CHECK(check("StreamLocalBindMask 0177").empty());
  CHECK(check("StreamLocalBindMask 0999").empty());  // OpenSSH reads the leading 0 and stops
  CHECK(check("StreamLocalBindMask x77") == "StreamLocalBindMask: \"x77\" is not an octal mask such as 0177");
  CHECK(check("CanonicalDomains example.com none") ==
        "CanonicalDomains: \"none\" must be the only value; remove it or the others");
  CHECK(check("CanonicalizePermittedCNAMEs *.a:*.b").empty());
  CHECK(check("CanonicalizePermittedCNAMEs nocolon") ==
        "CanonicalizePermittedCNAMEs: \"nocolon\" is not a rule; write source_domains:target_domains");
  CHECK(check("Protocol 1,2 whatever").empty());  // deprecated: anything goes
  CHECK(check("FingerprintHash sha256").empty());
}
