// Ports and ProxyJump values.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "tpush/ssh_config/jump.h"

using namespace tpush::ssh_config;

TEST_CASE("ssh_config jump: ports are numbers 0..65535 or service names") {
  CHECK(parse_port("22") == 22);
  CHECK(parse_port("022") == 22);
  CHECK(parse_port("65535") == 65535);
  CHECK(parse_port("0") == 0);  // a number; the caller refuses 0
  CHECK(parse_port("65536") == -1);
  CHECK(parse_port("-1") == -1);
  CHECK(parse_port("22x") == -1);
  CHECK(parse_port("") == -1);
  CHECK(parse_port("no-such-service-tpush") == -1);
  // A service name is looked up in /etc/services, as OpenSSH's a2port() does
  // (getservbyname): netbase's file, which `make deps` installs.
  REQUIRE_MESSAGE(std::filesystem::exists("/etc/services"),
                  "/etc/services is missing: service names cannot be looked up here (install netbase)");
  CHECK(parse_port("ssh") == 22);
}

TEST_CASE("ssh_config jump: hops and the form ssh -G prints") {
  ProxyJumpValue v;
  REQUIRE(parse_proxy_jump("admin@gw.example.com:2222", v).empty());
  REQUIRE(v.hops.size() == 1);
  CHECK(v.hops[0].user == "admin");
  CHECK(v.hops[0].host == "gw.example.com");
  CHECK(v.hops[0].port == 2222);
  CHECK(v.display == "admin@gw.example.com:2222");

  REQUIRE(parse_proxy_jump("hop1,u@hop2:22,[2001:db8::1]:2022", v).empty());
  REQUIRE(v.hops.size() == 3);
  CHECK(v.hops[0].host == "hop1");
  CHECK(v.hops[0].port == -1);
  CHECK(v.hops[1].user == "u");
  CHECK(v.hops[2].host == "2001:db8::1");
  CHECK(v.display == "hop1,u@hop2:22,[2001:db8::1]:2022");

  REQUIRE(parse_proxy_jump("ssh://a%40b@gw.example.com.:2200/", v).empty());
  CHECK(v.hops[0].user == "a@b");
  CHECK(v.hops[0].host == "gw.example.com");  // the trailing dot goes
  CHECK(v.display == "a@b@gw.example.com:2200");

  REQUIRE(parse_proxy_jump("10.0.0.5", v).empty());
  CHECK(v.display == "[10.0.0.5]");
  REQUIRE(parse_proxy_jump("gw # comment", v).empty());
  CHECK(v.display == "gw");
  REQUIRE(parse_proxy_jump("a,b c,d", v).empty());  // Debian's ssh reads up to the first blank
  CHECK(v.display == "a,b");
}

TEST_CASE("ssh_config jump: none") {
  ProxyJumpValue v;
  REQUIRE(parse_proxy_jump("NONE", v).empty());
  CHECK(v.none);
  CHECK(v.hops.empty());
  REQUIRE(parse_proxy_jump("none # not none: a host called none", v).empty());
  CHECK_FALSE(v.none);
  CHECK(v.hops[0].host == "none");
}

TEST_CASE("ssh_config jump: malformed hops") {
  ProxyJumpValue v;
  CHECK(parse_proxy_jump("@gw", v) == "\"@gw\" is not [user@]host[:port] or ssh://[user@]host[:port]");
  CHECK_FALSE(parse_proxy_jump("gw:0", v).empty());
  CHECK_FALSE(parse_proxy_jump("gw:http-alt-x", v).empty());
  CHECK_FALSE(parse_proxy_jump("a,,b", v).empty());
  CHECK_FALSE(parse_proxy_jump("gw/path", v).empty());
  CHECK_FALSE(parse_proxy_jump("[::1", v).empty());
  CHECK_FALSE(parse_proxy_jump("ssh://gw/path", v).empty());
  CHECK_FALSE(parse_proxy_jump("ssh://-bad", v).empty());
  CHECK_FALSE(parse_proxy_jump("# only a comment", v).empty());
}

TEST_CASE("ssh_config jump: names ssh accepts on its command line") {
  CHECK(valid_command_line_host("web-1.example.com"));
  CHECK(valid_command_line_host("fe80::1%eth0"));
  CHECK(valid_command_line_host("a*b!c"));
  for (const char* bad : {"-oProxyCommand=x", "a b", "a;b", "a$b", "a,b", "a'b", "a\tb", "a`b`"})
    CHECK_MESSAGE(!valid_command_line_host(bad), bad);
  CHECK(valid_command_line_user("alice"));
  CHECK(valid_command_line_user("a b"));
  CHECK(valid_command_line_user("a$b"));
  CHECK(valid_command_line_user("a\\b"));
  for (const char* bad : {"-x", "a -b", "a\\", "a;b", "a{b", "a\tb", "a\x01" "b"})
    CHECK_MESSAGE(!valid_command_line_user(bad), bad);
}
