// One item of a host list. The item syntax is also exercised through whole lists
// in test_inventory_host_list.cpp (ranges, ports, IPv6, error messages).
#include "tpush/inventory/host_pattern.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tpush/util/error.h"

namespace {

using tpush::UsageError;
using tpush::inventory::escape_for_message;
using tpush::inventory::host_text;
using tpush::inventory::HostPattern;
using tpush::inventory::parse_host_item;
using tpush::inventory::quote_for_message;
using Names = std::vector<std::string>;

std::string item_error(const std::string& item) {
  try {
    parse_host_item(item);
  } catch (const UsageError& e) {
    return e.what();
  }
  FAIL("expected a UsageError");
  return {};
}

}  // namespace

TEST_CASE("host pattern: the parts of an item") {
  const auto plain = parse_host_item("alice@node[1-2]:2222");
  CHECK(plain.user == "alice");
  CHECK(plain.port == 2222);
  CHECK_FALSE(plain.address);
  REQUIRE(plain.pattern);
  CHECK(plain.pattern->count() == 2);
  CHECK(plain.pattern->names() == Names{"node1", "node2"});
  CHECK_FALSE(plain.wildcard);

  const auto v6 = parse_host_item("[fe80::1%eth0]:22");
  CHECK(v6.address == "fe80::1%eth0");
  CHECK(v6.port == 22);
  CHECK_FALSE(v6.pattern);
  CHECK(parse_host_item("2001:db8::5").address == "2001:db8::5");

  const auto wild = parse_host_item("bob@n[1-2]*");
  CHECK(wild.wildcard);
  CHECK(wild.pattern->names() == Names{"n1*", "n2*"});

  CHECK(item_error("@h") == "bad host list '@h': missing user name before '@' (write user@host)");
  CHECK(item_error("h:0") == "bad port '0' in 'h:0' (ports are 1-65535)");
  // pdsh's RCMD_TYPE: prefix reads like host:port or a user with a ':'.
  CHECK(item_error("exec:foo[1-10]") ==
        "bad host list 'exec:foo[1-10]': 'exec:' is pdsh's RCMD_TYPE prefix, which tpush does not take "
        "(write [user@]host[:port])");
  CHECK(item_error("ssh:bob@h").find("'ssh:' is pdsh's RCMD_TYPE prefix") != std::string::npos);
  CHECK(parse_host_item("ssh:22").port == 22);  // a host named ssh
}

TEST_CASE("host pattern: ranges") {
  CHECK(HostPattern("n[01-03,7]", "n[01-03,7]").names() == Names{"n01", "n02", "n03", "n7"});
  CHECK(HostPattern("n[1-9/4]", "n[1-9/4]").names() == Names{"n1", "n5", "n9"});
  CHECK(HostPattern("n[3,1,3]", "n[3,1,3]").names() == Names{"n3", "n1"});
  CHECK(HostPattern("r[1-2]n[1-2]", "r[1-2]n[1-2]").count() == 4);
  // Offsets in messages count from the start of the item.
  try {
    HostPattern("n[1-", "alice@n[1-", 6);
    FAIL("expected a UsageError");
  } catch (const UsageError& e) {
    CHECK(std::string(e.what()) == "bad host list 'alice@n[1-': unclosed '[' at column 8 (add ']')");
  }
  // Touching ranges are refused only when a name comes out twice, and only when
  // the names are built.
  const HostPattern touching("n[1-11][1-11]", "n[1-11][1-11]");
  CHECK(touching.count() == 121);
  CHECK_THROWS_AS(touching.names(), UsageError);
  CHECK(HostPattern("n[1-2]0[1-2]", "n[1-2]0[1-2]").names() == Names{"n101", "n102", "n201", "n202"});
}

TEST_CASE("host pattern: texts and messages") {
  CHECK(host_text("h", 0) == "h");
  CHECK(host_text("h", 22) == "h:22");
  CHECK(host_text("::1", 22) == "[::1]:22");
  CHECK(host_text("::1", 0) == "::1");
  CHECK(escape_for_message("a\nb\tc\r\x1b\x7f\xc3\xa9") == "a\\nb\\tc\\r\\x1b\\x7f\xc3\xa9");
  CHECK(quote_for_message("x\x01") == "'x\\x01'");
}
