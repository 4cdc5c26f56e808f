#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "test_nodeset_support.h"
#include "test_support.h"
#include "tpush/inventory/host_filter.h"
#include "tpush/inventory/host_list.h"
#include "tpush/util/error.h"

namespace {

using tpush::test::TempDir;

using tpush::UsageError;
using tpush::test::error_of;
using tpush::inventory::expand_host_list;
using tpush::inventory::HostSpec;
using tpush::inventory::parse_hosts_text;
using tpush::inventory::read_hosts_file;
namespace fs = std::filesystem;

std::vector<std::string> names(const std::vector<HostSpec>& hosts) {
  std::vector<std::string> out;
  for (const auto& h : hosts) out.push_back(h.host);
  return out;
}

std::vector<std::string> texts(const std::vector<HostSpec>& hosts) {
  std::vector<std::string> out;
  for (const auto& h : hosts) out.push_back(h.text);
  return out;
}

std::string expand_error(const std::string& expr) {
  return error_of<UsageError>([&] { expand_host_list(expr); });
}

}  // namespace

TEST_CASE("host list: plain names and commas") {
  CHECK(names(expand_host_list("a")) == std::vector<std::string>{"a"});
  CHECK(names(expand_host_list("a,b,c")) == std::vector<std::string>{"a", "b", "c"});
  CHECK(names(expand_host_list(" a , b\t,c ")) == std::vector<std::string>{"a", "b", "c"});
  CHECK(names(expand_host_list("10.0.0.1,host.example.com")) ==
        std::vector<std::string>{"10.0.0.1", "host.example.com"});
  const auto one = expand_host_list("a");
  REQUIRE(one.size() == 1);
  CHECK(one[0] == HostSpec{"", "a", 0, "a"});
}

TEST_CASE("host list: empty items are skipped") {
  CHECK(expand_host_list("").empty());
  CHECK(expand_host_list("  ").empty());
  CHECK(expand_host_list(",,").empty());
  CHECK(names(expand_host_list("a,,b,")) == std::vector<std::string>{"a", "b"});
  CHECK(names(expand_host_list(",a")) == std::vector<std::string>{"a"});
}

TEST_CASE("host list: ranges") {
  CHECK(names(expand_host_list("node[1-3]")) ==
        std::vector<std::string>{"node1", "node2", "node3"});
  CHECK(names(expand_host_list("node[1-3,7]")) ==
        std::vector<std::string>{"node1", "node2", "node3", "node7"});
  CHECK(names(expand_host_list("node[5]")) == std::vector<std::string>{"node5"});
  CHECK(names(expand_host_list("node[3,1]")) == std::vector<std::string>{"node3", "node1"});
  CHECK(names(expand_host_list("[1-2]node")) == std::vector<std::string>{"1node", "2node"});
  CHECK(names(expand_host_list("n[1-2].example.com")) ==
        std::vector<std::string>{"n1.example.com", "n2.example.com"});
  CHECK(names(expand_host_list("node[4-4]")) == std::vector<std::string>{"node4"});

  const auto many = expand_host_list("node[01-16,20]");
  REQUIRE(many.size() == 17);
  CHECK(many.front().host == "node01");
  CHECK(many[15].host == "node16");
  CHECK(many.back().host == "node20");
}

TEST_CASE("host list: zero padding follows the lower bound") {
  CHECK(names(expand_host_list("n[01-10]")) == std::vector<std::string>{"n01", "n02", "n03", "n04",
                                                                        "n05", "n06", "n07", "n08",
                                                                        "n09", "n10"});
  CHECK(names(expand_host_list("n[1-10]")).at(0) == "n1");
  CHECK(names(expand_host_list("n[1-10]")).at(9) == "n10");
  CHECK(names(expand_host_list("n[001-3]")) == std::vector<std::string>{"n001", "n002", "n003"});
  CHECK(names(expand_host_list("n[0-2]")) == std::vector<std::string>{"n0", "n1", "n2"});
  CHECK(names(expand_host_list("n[098-101]")) ==
        std::vector<std::string>{"n098", "n099", "n100", "n101"});
  CHECK(names(expand_host_list("n[05]")) == std::vector<std::string>{"n05"});
  CHECK(names(expand_host_list("n[1-2,05]")) == std::vector<std::string>{"n1", "n2", "n05"});
}

TEST_CASE("host list: several groups form a product, leftmost slowest") {
  CHECK(names(expand_host_list("rack[1-2]-node[1-3]")) ==
        std::vector<std::string>{"rack1-node1", "rack1-node2", "rack1-node3", "rack2-node1",
                                 "rack2-node2", "rack2-node3"});
  CHECK(names(expand_host_list("r[1-2]n[3,4]c[0]")) ==
        std::vector<std::string>{"r1n3c0", "r1n4c0", "r2n3c0", "r2n4c0"});
}

TEST_CASE("host list: duplicates dropped, first kept") {
  CHECK(names(expand_host_list("b,a,b,a,c")) == std::vector<std::string>{"b", "a", "c"});
  CHECK(names(expand_host_list("n[1-3],n[2-4]")) ==
        std::vector<std::string>{"n1", "n2", "n3", "n4"});
  CHECK(names(expand_host_list("n[1,1]")) == std::vector<std::string>{"n1"});
  // Identity is user + host + port.
  const auto distinct = expand_host_list("h,alice@h,h:22,alice@h:22,h:22");
  CHECK(texts(distinct) == std::vector<std::string>{"h", "h", "h:22", "h:22"});
  CHECK(distinct[1].user == "alice");
  CHECK(distinct[3].user == "alice");
}

TEST_CASE("host list: users and ports") {
  const auto hosts = expand_host_list("alice@h1,h2:2222,bob@h3:22");
  REQUIRE(hosts.size() == 3);
  CHECK(hosts[0] == HostSpec{"alice", "h1", 0, "h1"});
  CHECK(hosts[1] == HostSpec{"", "h2", 2222, "h2:2222"});
  CHECK(hosts[2] == HostSpec{"bob", "h3", 22, "h3:22"});

  CHECK(expand_host_list("h:1").at(0).port == 1);
  CHECK(expand_host_list("h:65535").at(0).port == 65535);
  CHECK(expand_host_list("h:0022").at(0).text == "h:22");
}

TEST_CASE("host list: user and port apply to every expansion") {
  const auto hosts = expand_host_list("alice@node[1-3]:2222");
  REQUIRE(hosts.size() == 3);
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    CHECK(hosts[i].user == "alice");
    CHECK(hosts[i].port == 2222);
    CHECK(hosts[i].host == "node" + std::to_string(i + 1));
    CHECK(hosts[i].text == "node" + std::to_string(i + 1) + ":2222");
  }
}

TEST_CASE("host list: IPv6") {
  CHECK(expand_host_list("[::1]").at(0) == HostSpec{"", "::1", 0, "::1"});
  CHECK(expand_host_list("[fe80::1]:2222").at(0) ==
        HostSpec{"", "fe80::1", 2222, "[fe80::1]:2222"});
  CHECK(expand_host_list("alice@[2001:db8::5]:22").at(0) ==
        HostSpec{"alice", "2001:db8::5", 22, "[2001:db8::5]:22"});
  CHECK(expand_host_list("::1").at(0) == HostSpec{"", "::1", 0, "::1"});
  CHECK(expand_host_list("2001:db8::5").at(0) == HostSpec{"", "2001:db8::5", 0, "2001:db8::5"});
  CHECK(expand_host_list("bob@::1").at(0) == HostSpec{"bob", "::1", 0, "::1"});
  CHECK(expand_host_list("::ffff:10.0.0.1").at(0).host == "::ffff:10.0.0.1");
  CHECK(expand_host_list("[fe80::1%eth0]:22").at(0).host == "fe80::1%eth0");
  CHECK(names(expand_host_list("[::1],h,[::2]:22")) == std::vector<std::string>{"::1", "h", "::2"});
}

TEST_CASE("host list: range errors quote the item") {
  const auto backwards = expand_error("node[05-01]");
  CHECK(backwards == "bad host list 'node[05-01]': range 05-01 runs backwards (write node[01-05])");
  CHECK(expand_error("alice@n[1,9-3]:22").find("write alice@n[1,3-9]:22") != std::string::npos);

  const auto letter = expand_error("node[a-3]");
  CHECK(letter.find("'node[a-3]'") != std::string::npos);
  CHECK(letter.find("'a'") != std::string::npos);
  CHECK(letter.find("not a number") != std::string::npos);

  const auto no_upper = expand_error("node[1-]");
  CHECK(no_upper.find("'node[1-]'") != std::string::npos);
  CHECK(no_upper.find("upper bound") != std::string::npos);

  const auto no_lower = expand_error("node[-3]");
  CHECK(no_lower.find("'node[-3]'") != std::string::npos);
  CHECK(no_lower.find("lower bound") != std::string::npos);

  const auto unclosed = expand_error("node[1-3");
  CHECK(unclosed == "bad host list 'node[1-3': unclosed '[' at column 5 (add ']')");
  CHECK(expand_error("a,node[1-3,b").find("'node[1-3,b'") != std::string::npos);

  const auto stray = expand_error("node1]");
  CHECK(stray.find("'node1]'") != std::string::npos);
  CHECK(stray.find("stray ']' at column 6") != std::string::npos);

  const auto nested = expand_error("n[1[2]]");
  CHECK(nested.find("'n[1[2]]'") != std::string::npos);
  CHECK(nested.find("cannot nest") != std::string::npos);

  CHECK(expand_error("n[]").find("empty range []") != std::string::npos);
  CHECK(expand_error("n[1,,2]").find("empty entry in [1,,2]") != std::string::npos);
  CHECK(expand_error("n[1,]").find("'n[1,]'") != std::string::npos);
  CHECK(expand_error("n[1-2-3]").find("'1-2-3'") != std::string::npos);
  CHECK(expand_error("n[1234567890123456789]").find("too long") != std::string::npos);
  CHECK(expand_error("n[1:3]").find("'n[1:3]'") != std::string::npos);
}

TEST_CASE("host list: huge expansions are refused") {
  const auto one_range = expand_error("n[1-1000001]");
  CHECK(one_range.find("'n[1-1000001]'") != std::string::npos);
  CHECK(one_range.find("more than 1000000 hosts") != std::string::npos);

  const auto product = expand_error("n[1-1000]-[1-1000]-[1-1000]");
  CHECK(product.find("more than 1000000 hosts") != std::string::npos);

  CHECK(expand_error("n[0-999999999999999999]").find("more than 1000000") != std::string::npos);
  // The limit counts the whole list, not just one item.
  const auto whole = expand_error("n[1-500000],m[1-500001]");
  CHECK(whole.find("'m[1-500001]'") != std::string::npos);
  CHECK(whole.find("the host list expands to more than 1000000") != std::string::npos);

  CHECK(expand_host_list("n[1-100]-[01-100]").size() == 10'000);
}

TEST_CASE("host list: port errors") {
  CHECK(expand_error("h:99999") == "bad port '99999' in 'h:99999' (ports are 1-65535)");
  CHECK(expand_error("h:0").find("bad port '0' in 'h:0'") != std::string::npos);
  CHECK(expand_error("h:65536").find("'65536'") != std::string::npos);
  CHECK(expand_error("h:ssh").find("bad port 'ssh' in 'h:ssh'") != std::string::npos);
  CHECK(expand_error("h:-1").find("bad port '-1'") != std::string::npos);
  CHECK(expand_error("h:123456789012345678901").find("bad port") != std::string::npos);
  CHECK(expand_error("h:").find("missing port after ':' in 'h:'") != std::string::npos);
  CHECK(expand_error("h:[22-23]").find("host part only") != std::string::npos);
  CHECK(expand_error("[::1]:70000").find("bad port '70000' in '[::1]:70000'") != std::string::npos);
  CHECK(expand_error("[::1]:").find("missing port") != std::string::npos);
}

TEST_CASE("host list: user and host errors") {
  CHECK(expand_error("@h").find("'@h'") != std::string::npos);
  CHECK(expand_error("@h").find("unknown group '@h' (no groups file is set up") != std::string::npos);
  CHECK(expand_error("alice@").find("missing host name") != std::string::npos);
  CHECK(expand_error("a@b@c").find("second '@'") != std::string::npos);
  CHECK(expand_error("u[1-2]@h").find("user name 'u[1-2]'") != std::string::npos);
  CHECK(expand_error(":22").find("missing host name") != std::string::npos);
  const auto colons = expand_error("host:22:33");
  CHECK(colons.find("'host:22:33'") != std::string::npos);
  CHECK(colons.find("not an IPv6 address") != std::string::npos);
  CHECK(expand_error("[::1]x").find("unexpected 'x'") != std::string::npos);
  CHECK(expand_error("[::g]:22").find("'::g'") != std::string::npos);
  CHECK(expand_error("n[1-2]::1").find("'n[1-2]::1'") != std::string::npos);
  CHECK(expand_error("^").find("needs a file name") != std::string::npos);
}

TEST_CASE("host list: error messages are one line without a trailing period") {
  for (const char* bad : {"node[05-01]", "h:99999", "n[1-", "n]", "@h", "^/nonexistent/x", "a!",
                          "n[1-11][1-11]", "/x(/", "n*", "n[1/2]", "-"}) {
    const auto message = expand_error(bad);
    CHECK(message.find('\n') == std::string::npos);
    CHECK(message.back() != '.');
  }
}

TEST_CASE("host list: hosts file text") {
  const std::string text =
      "# cluster A\n"
      "\n"
      "  alice@h1:22   # the first\n"
      "h2\r\n"
      "node[1-2]\n"
      "[::1]:2200\n"
      "\t  \n"
      "a,b  # commas work too\n"
      "h2\n";
  const auto hosts = parse_hosts_text(text, "hosts.txt");
  CHECK(texts(hosts) ==
        std::vector<std::string>{"h1:22", "h2", "node1", "node2", "[::1]:2200", "a", "b"});
  CHECK(hosts[0].user == "alice");
  CHECK(hosts[4].host == "::1");
  CHECK(parse_hosts_text("", "x").empty());
  CHECK(parse_hosts_text("# only\n  # comments\n", "x").empty());
  CHECK(names(parse_hosts_text("last-without-newline", "x")) ==
        std::vector<std::string>{"last-without-newline"});
}

TEST_CASE("host list: hosts file errors name file and line") {
  const auto port = error_of<UsageError>([] { parse_hosts_text("a\n\n# c\nh:99999\n", "hosts.txt"); });
  CHECK(port == "hosts.txt:4: bad port '99999' in 'h:99999' (ports are 1-65535)");
  const auto range = error_of<UsageError>([] { parse_hosts_text("n[3-1]", "f"); });
  CHECK(range.rfind("f:1: bad host list 'n[3-1]'", 0) == 0);
  const auto operand = error_of<UsageError>([] { parse_hosts_text("ok\nh1 h2!\n", "f"); });
  CHECK(operand.rfind("f:2: bad host list 'h1 h2!': '!' at column 6 has nothing on its right", 0) == 0);
}

TEST_CASE("host list: reading hosts files") {
  TempDir dir;
  const auto file = dir.write("hosts", "h1\nbob@h2:2200\n");
  CHECK(texts(read_hosts_file(file)) == std::vector<std::string>{"h1", "h2:2200"});

  const auto missing = error_of<UsageError>([&] { read_hosts_file(dir.path() / "nope.txt"); });
  CHECK(missing == "cannot read hosts file '" + (dir.path() / "nope.txt").string() +
                       "': No such file or directory");

  const auto directory = error_of<UsageError>([&] { read_hosts_file(dir.path()); });
  CHECK(directory.find("cannot read hosts file") != std::string::npos);
  CHECK(directory.find("Is a directory") != std::string::npos);

  const auto bad = dir.write("bad", "ok\nn[1-\n");
  CHECK(error_of<UsageError>([&] {
          read_hosts_file(bad);
        }).rfind(bad.string() + ":2: bad host list 'n[1-'", 0) == 0);

  if (geteuid() != 0) {  // root reads anything
    const auto locked = dir.write("locked", "h\n");
    chmod(locked.c_str(), 0);
    CHECK(error_of<UsageError>([&] { read_hosts_file(locked); }).find("Permission denied") !=
          std::string::npos);
  }
}

TEST_CASE("host list: ^FILE splices a hosts file in place") {
  TempDir dir;
  const auto file = dir.write("hosts", "b\nc:2222\n");
  const auto hosts = expand_host_list("a,^" + file.string() + ",d,b");
  CHECK(texts(hosts) == std::vector<std::string>{"a", "b", "c:2222", "d"});

  const auto missing = expand_error("a,^" + (dir.path() / "nope").string());
  CHECK(missing.find("cannot read hosts file '" + (dir.path() / "nope").string() + "'") !=
        std::string::npos);
  CHECK(missing.find("No such file or directory") != std::string::npos);

  // Included files may include others; errors carry the chain of file:line.
  const auto inner = dir.write("inner", "x\nh:0\n");
  const auto outer = dir.write("outer", "y\n^" + inner.string() + "\n");
  const auto chained = error_of<UsageError>([&] { read_hosts_file(outer); });
  CHECK(chained.rfind(outer.string() + ":2: " + inner.string() + ":2: bad port '0'", 0) == 0);

  // A file that includes itself is refused instead of recursing forever.
  const auto self = dir.write("self", "a\n^" + (dir.path() / "self").string() + "\n");
  CHECK(error_of<UsageError>([&] { read_hosts_file(self); }).find("includes itself") != std::string::npos);
  const auto ping = dir.path() / "ping";
  const auto pong = dir.write("pong", "^" + ping.string() + "\n");
  dir.write("ping", "^" + pong.string() + "\n");
  const auto cycle = expand_error("^" + ping.string());
  CHECK(cycle.find("includes itself") != std::string::npos);
  CHECK(cycle.find(pong.string()) != std::string::npos);

  // The same file twice (not nested) is fine, and deduplicated.
  CHECK(texts(expand_host_list("^" + file.string() + ",^" + file.string())) ==
        std::vector<std::string>{"b", "c:2222"});
}

// --- Lists as pdsh and clush users write them -------------------------------------

namespace {

using tpush::inventory::HostGroups;
using tpush::inventory::HostListOptions;
using tpush::inventory::select_hosts;

using Names = std::vector<std::string>;

Names expand_names(const std::string& expr, const HostListOptions& options = {}) {
  return names(expand_host_list(expr, options));
}

std::string expand_error_with(const std::string& expr, const HostListOptions& options) {
  return error_of<UsageError>([&] { expand_host_list(expr, options); });
}

const HostGroups& test_groups() {
  static const HostGroups groups(
      "# test groups\n"
      "rack1: n[1-4]\n"
      "rack2: n[5-8]\n"
      "login: login1 login2   # blanks separate too\n"
      "racks: @rack[1-2]\n"
      "odd: n[1-8/2]\n"
      "esc%test: x1\n"
      "all: @racks,@login,db1\n",
      "groups");
  return groups;
}

HostListOptions with_groups() { return HostListOptions{&test_groups(), {}}; }

}  // namespace

TEST_CASE("host list: blanks and newlines separate items, as -w \"$(cat hosts)\" gives") {
  CHECK(expand_names("a b\tc\nd") == Names{"a", "b", "c", "d"});
  CHECK(expand_names("a\r\nb\r\n") == Names{"a", "b"});
  CHECK(expand_names("  a ,  b  ") == Names{"a", "b"});
  CHECK(expand_names("# hosts\nn[1-2]   # rack 1\n\nalice@m:22\n") == Names{"n1", "n2", "m"});
  // Blanks inside brackets are part of the range, as in nodeset.
  CHECK(expand_names("n[ 1 - 2 , 4 ]") == Names{"n1", "n2", "n4"});
}

TEST_CASE("host list: control characters in messages are escaped") {
  const auto bell = expand_error("n[1-\a]");
  CHECK(bell.find("'n[1-\\x07]'") != std::string::npos);
  CHECK(bell.find('\a') == std::string::npos);
  const auto newline = expand_error("n[1-\n2]");  // the bracket does not close on its line
  CHECK(newline.find('\n') == std::string::npos);
  CHECK(expand_error("a,h:\x1b[1m") ==
        "bad host list 'h:\\x1b[1m': '\\x1b' at column 3 cannot be in a host name: a control character (remove it)");
}

TEST_CASE("host list: bytes that cannot be a host name are an error naming them, never a host") {
  CHECK(expand_error("a,\xff\xfe,b") == "bad host list '\\xff\\xfe': '\\xff\\xfe' at column 1 cannot be in a host "
                                       "name: not UTF-8 text (write host names in ASCII or UTF-8)");
  CHECK(expand_error("gpu\xc2\x9b" "1") ==
        "bad host list 'gpu\\xc2\\x9b1': '\\xc2\\x9b' at column 4 cannot be in a host name: a control character "
        "(remove it)");  // U+009B, a C1 control (CSI)
  CHECK(expand_error("\xef\xbb\xbf" "a").find("a byte-order mark (remove it)") != std::string::npos);
  // UTF-8 names are text: an ssh_config alias or /etc/hosts may hold one.
  CHECK(expand_names("b\xc3\xbc" "cher,caf\xc3\xa9") == Names{"b\xc3\xbc" "cher", "caf\xc3\xa9"});
}

TEST_CASE("host list: a hosts file line with a NUL or bytes that are not text names FILE:LINE") {
  // A NUL anywhere on the line, even in a comment: the file is not text.
  CHECK(error_of<UsageError>([] { parse_hosts_text(std::string("node1\nnode2 # x\0y\n", 18), "hosts.txt"); }) ==
        "hosts.txt:2: bad host list 'node2 # x\\x00y': '\\x00' at column 10 cannot be in a host name: a NUL byte "
        "(a hosts file is ASCII or UTF-8 text; convert it, e.g. iconv -f UTF-16 -t UTF-8 hosts.txt > hosts.utf8)");
  // UTF-16, as Windows editors save it: a byte-order mark, then a NUL after every ASCII character.
  const std::string utf16("\xff\xfen\0o\0d\0e\0\n\0", 12);
  CHECK(error_of<UsageError>([&] { parse_hosts_text(utf16, "hosts.txt"); })
            .rfind("hosts.txt:1: bad host list '\\xff\\xfen\\x00o\\x00d\\x00e\\x00': '\\xff\\xfe' at column 1 cannot be "
                   "in a host name: not UTF-8 text (a hosts file is ASCII or UTF-8 text; convert it",
                   0) == 0);
  CHECK(error_of<UsageError>([] { parse_hosts_text("a\n\xff\xfe\n", "f"); }).rfind("f:2: bad host list '\\xff\\xfe'", 0) ==
        0);
  CHECK(error_of<UsageError>([] { parse_hosts_text("\xef\xbb\xbfnode1\n", "f"); })
            .find("a byte-order mark (save the file without one)") != std::string::npos);
  // Bytes that are not UTF-8 in a comment are only a comment (a Latin-1 name, say).
  CHECK(texts(parse_hosts_text("node1  # M\xfcller's\nnode2\n", "f")) == Names{"node1", "node2"});
}

TEST_CASE("host list: '#' starts a comment at the start of an item, inside a name it is part of it") {
  // nodeset -e and pdsh -w keep gpu-#4; cutting it at '#' ran on the host gpu-.
  CHECK(expand_names("gpu-#4") == Names{"gpu-#4"});
  CHECK(expand_names("gpu-#[1-2],n1#x") == Names{"gpu-#1", "gpu-#2", "n1#x"});
  CHECK(expand_names("a,b #c\n#d\ne,#f") == Names{"a", "b", "e"});
  // The same in a hosts file (pdsh would cut y#z to y).
  CHECK(texts(parse_hosts_text("gpu-#4\ny#z  # a comment\n# the end\n", "f")) == Names{"gpu-#4", "y#z"});
  // Right after an operator or a '-' it can be neither: an error.
  CHECK(expand_error("a^#b") == "bad host list 'a^#b': '#b' at column 3: a host name cannot start with '#' (a '#' "
                                "starts a comment after a blank or a comma, and is part of a name inside one)");
  CHECK_THROWS_AS(expand_host_list("a,-#b"), UsageError);
  // Or right after user@ (the fuzzer's `alice@# comment` ran on a host named '#').
  CHECK(expand_error("alice@#x") == "bad host list 'alice@#x': a host name cannot start with '#' (write user@host; a "
                                    "'#' starts a comment after a blank or a comma)");
  CHECK_THROWS_AS(parse_hosts_text("alice@# comment\n", "f"), UsageError);
  // #include still reads a file from the first column.
  CHECK(expand_error("#include").find("#include takes one file name") != std::string::npos);
}

TEST_CASE("host list: pdsh's -HOST, -^FILE and /REGEX/") {
  CHECK(expand_names("foo[9-11],-foo10") == Names{"foo9", "foo11"});
  CHECK(expand_names("-foo10,foo[9-11]") == Names{"foo9", "foo11"});  // wherever it stands
  CHECK(expand_names("foo[0-5] -foo[1-3]") == Names{"foo0", "foo4", "foo5"});
  CHECK(expand_names("foo[0-20],/0$/") == Names{"foo0", "foo10", "foo20"});
  CHECK(expand_names("foo[0-20],-/[1-9]$/") == Names{"foo0", "foo10", "foo20"});
  CHECK(expand_names("foo[0-20],/^foo1/,-/1$/") ==
        Names{"foo10", "foo12", "foo13", "foo14", "foo15", "foo16", "foo17", "foo18", "foo19"});
  // A user or port in an exclusion must match, as for -x.
  CHECK(texts(expand_host_list("alice@h,h:22,h,-alice@h")) == Names{"h:22", "h"});
  CHECK(texts(expand_host_list("h,h:22,-h:22")) == Names{"h"});

  TempDir dir;
  const auto file = dir.write("wcoll", "foo[9-11]\nfoo12\n");
  CHECK(expand_names("foo[8-12],-^" + file.string()) == Names{"foo8"});
  // Exclusions in a file apply to that file.
  const auto with_minus = dir.write("minus", "n[1-3]\n-n2\n");
  CHECK(expand_names("^" + with_minus.string() + ",n2") == Names{"n1", "n3", "n2"});

  CHECK(expand_error("a,-").find("'-' at column 3 needs a host, @group, ^FILE or /REGEX/") !=
        std::string::npos);
  CHECK(expand_error("-") == "bad host list '-': tpush does not read hosts from standard input, as "
                             "pdsh -w - does (write -H FILE)");
  CHECK(expand_error("a!-b").find("a host name cannot start with '-'") != std::string::npos);
  CHECK(expand_error("-b&c").find("'-b' cannot take part in '&'") != std::string::npos);
  CHECK(expand_error("a,/b").find("the filter '/b' must end with '/'") != std::string::npos);
  CHECK(expand_error("a,//").find("empty filter") != std::string::npos);
  CHECK(expand_error("a,/x(/").find("bad regular expression 'x('") != std::string::npos);
  CHECK(expand_error("a!/x/").find("the filter '/x/' cannot take part in '!'") != std::string::npos);
  CHECK(expand_error("/x/ !a").find("'/x/' cannot take part in '!'") != std::string::npos);
  CHECK(expand_error("/x/!a").find("a filter runs to the next comma or blank") != std::string::npos);
}

TEST_CASE("host list: filters on long names and deeply nested groups do not overflow the stack (fuzz)") {
  // Found with the host_list fuzz target (hand-made inputs): std::regex used one
  // stack frame per character of the name it matched, so a long name under
  // /(a|b)*c/ crashed. POSIX regexec() matches without recursing.
  const std::string long_name(200'000, 'a');
  CHECK(expand_names(long_name + ",b,/(a|b)*c/").empty());
  CHECK(expand_names(long_name + ",bc,-/^a(a|b)*$/") == Names{"bc"});
  // Parsing a group recurses into it: thousands of nested groups are refused.
  const std::string deep = std::string(20'000, '(') + "a" + std::string(20'000, ')');
  CHECK(expand_error("a,/" + deep + "/").find("groups nested more than 64 deep") != std::string::npos);
  const std::string ok = std::string(64, '(') + "a" + std::string(64, ')');
  CHECK(expand_names("a,b,/" + ok + "/") == Names{"a"});
  // A filter is a POSIX extended regular expression, as regcomp() reads it.
  CHECK(expand_names("n[1-12],/^n(1|2)$/") == Names{"n1", "n2"});
  CHECK(expand_names("n[1-12],/^n[[:digit:]]{2}$/") == Names{"n10", "n11", "n12"});
}

TEST_CASE("host list: a filter whose repeats regcomp() would write out past any memory is refused (fuzz)") {
  // Found by the hosts_file fuzz target in CI: glibc's regcomp() copies what a
  // repeat applies to, so each + of e++++ doubled the copies (forty took the
  // machine's 24 GB). Refused before regcomp() sees it, naming the filter.
  const std::string stacked = "/he" + std::string(127, '+') + "#/";
  const std::string why = expand_error("a," + stacked);
  CHECK(why.find("bad regular expression 'he++") != std::string::npos);
  CHECK(why.find("its repeats would make over 20000 copies (no repeat of a repeat like e++") != std::string::npos);
  CHECK(expand_error("a,/(((a{100}){100}){100})/").find("its repeats would make over") != std::string::npos);
  CHECK(expand_error("a,/(x|y+)++++++++++++++++++++/").find("its repeats would make over") != std::string::npos);
  // Past a double's range the count is infinite, and a star after it still counts.
  CHECK(expand_error("a,/e" + std::string(1100, '+') + "*/").find("its repeats would make over") != std::string::npos);
  // What real filters write stays well under the bound.
  CHECK(expand_names("n[1-12],/^n[0-9]+$/,-/^n1[0-9]?$/") == Names{"n2", "n3", "n4", "n5", "n6", "n7", "n8", "n9"});
  CHECK(expand_names("n1,n22,/^n(2){2}$/") == Names{"n22"});
  CHECK(expand_names("a,/(a{100}){100}/").empty());
  // Bounds with a comma come only from parse_host_filter (a comma ends a host list's filter).
  using tpush::inventory::parse_host_filter;
  // In brackets a '+' is a member, not a repeat; so is a ']' first.
  CHECK(parse_host_filter("/^[]" + std::string(100, '+') + "]+$/", false).matches("+]+"));
  CHECK(parse_host_filter("/^n[0-9]{1,3}$/", false).matches("n123"));
  CHECK(parse_host_filter("/^n[[:digit:]]{2,}$/", false).matches("n1234"));
  CHECK(error_of<UsageError>([] { parse_host_filter("/(a{1,200}){1,200}/", false); })
            .find("its repeats would make over") != std::string::npos);
}

TEST_CASE("host list: ClusterShell's operators, left to right") {
  CHECK(expand_names("n[1-5]!n[2-3]") == Names{"n1", "n4", "n5"});
  CHECK(expand_names("n[1-5]&n[3-8]") == Names{"n3", "n4", "n5"});
  CHECK(expand_names("n[1-5]^n[3-8]") == Names{"n1", "n2", "n6", "n7", "n8"});
  CHECK(expand_names("a,b!b,c") == Names{"a", "c"});       // (a,b)!b then ,c
  CHECK(expand_names("a,b,c!b&a,c") == Names{"a", "c"});   // ((a,b,c)!b)&a then ,c
  CHECK(expand_names("n[1-4] ! n2 & n[2-3]") == Names{"n3"});
  CHECK(expand_names("a b ^ b c") == Names{"a", "c"});
  // Each line (of a file, or of -w "$(cat hosts)") is evaluated on its own.
  CHECK(expand_names("a\nb!a") == Names{"a", "b"});
  CHECK(parse_hosts_text("n[1-3]\nn[2-5]!n[1-4]\n", "f").size() == 4);
  // The right side is a filter: where it names a user or port, those must match.
  CHECK(texts(expand_host_list("alice@h,bob@h,h:22!alice@h")) == Names{"h", "h:22"});
  CHECK(texts(expand_host_list("h,h:22&h:22")) == Names{"h:22"});

  // '^' right after a comma, a blank or the start is ^FILE; after an item, xor.
  TempDir dir;
  const auto file = dir.write("f", "b\nc\n");
  CHECK(expand_names("a,^" + file.string()) == Names{"a", "b", "c"});
  CHECK(expand_names("a,b^b") == Names{"a"});
  CHECK(expand_names("a,b!^" + file.string()) == Names{"a"});

  CHECK(expand_error("!a") == "bad host list '!a': '!' at column 1 has nothing on its left (write "
                              "a!b: the hosts of a without those of b)");
  CHECK(expand_error("a,&b").find("'&' at column 3 has nothing on its left") != std::string::npos);
  CHECK(expand_error("a!,b").find("'!' at column 2 has nothing on its right") != std::string::npos);
  CHECK(expand_error("a^").find("'^' at column 2 has nothing on its right") != std::string::npos);
  CHECK(expand_error("a!&b").find("'&' at column 3 follows '!' at column 2") != std::string::npos);
}

TEST_CASE("host list: steps, and ranges that run together") {
  CHECK(expand_names("n[1-9/2]") == Names{"n1", "n3", "n5", "n7", "n9"});
  CHECK(expand_names("n[01-10/3]") == Names{"n01", "n04", "n07", "n10"});
  CHECK(expand_names("n[0-4/5]") == Names{"n0"});
  CHECK(expand_names("n[1-4/2,2]") == Names{"n1", "n3", "n2"});
  CHECK(expand_error("n[3/2]").find("step in '3/2' needs a range (write 3-N/2)") != std::string::npos);
  CHECK(expand_error("n[1-9/0]").find("bad step '0'") != std::string::npos);
  CHECK(expand_error("n[1-9/x]").find("bad step 'x'") != std::string::npos);
  CHECK(expand_error("n[9-1/2]").find("runs backwards (write n[1-9/2])") != std::string::npos);

  // Ranges that touch are fine while every name comes out once...
  CHECK(expand_names("n[1-2][3-4]") == Names{"n13", "n14", "n23", "n24"});
  CHECK(expand_host_list("n[1-9][0-9]").size() == 90);
  // ...and an error when a name would mean two things.
  CHECK(expand_error("n[1-11][1-11]") ==
        "bad host list 'n[1-11][1-11]': the ranges at column 7 and column 8 run together, so 'n111' "
        "comes out twice (put a separator between them: n[1-11]-[1-11])");
  CHECK(expand_error("n[1-11]1[1-11]").find("run together") != std::string::npos);
  CHECK(expand_names("n[1-11]-[1-11]").size() == 121);
}

TEST_CASE("host list: @group, @source:group, @*") {
  const auto g = with_groups();
  CHECK(expand_names("@rack1", g) == Names{"n1", "n2", "n3", "n4"});
  CHECK(expand_names("@local:rack1", g) == Names{"n1", "n2", "n3", "n4"});
  CHECK(expand_names("@login", g) == Names{"login1", "login2"});
  CHECK(expand_names("@rack[1-2]!@odd", g) == Names{"n2", "n4", "n6", "n8"});
  CHECK(expand_names("@racks&@odd,db1", g) == Names{"n1", "n3", "n5", "n7", "db1"});
  CHECK(expand_names("@esc%test", g) == Names{"x1"});
  CHECK(expand_host_list("@*", g).size() == 11);
  CHECK(expand_host_list("@local:*", g).size() == 11);
  CHECK(expand_names("@*,-@racks", g) == Names{"login1", "login2", "db1"});
  CHECK(texts(expand_host_list("alice@n1:22,@rack1!alice@n1", g)) == Names{"n1", "n2", "n3", "n4"});
  CHECK(texts(expand_host_list("alice@n1:22,@rack1!n1", g)) == Names{"n2", "n3", "n4"});

  CHECK(expand_error_with("@rack9", g) ==
        "bad host list '@rack9': unknown group '@rack9' (groups come from groups file 'groups' "
        "(source 'local'))");
  CHECK(expand_error_with("@other:rack1", g).find("unknown group '@other:rack1'") != std::string::npos);
  CHECK(expand_error_with("@", g).find("'@' needs a group name") != std::string::npos);
  CHECK(expand_error_with("@@local", g).find("'@@' lists the names of groups") != std::string::npos);
  CHECK(expand_error_with("@:x", g).find("write @SOURCE:GROUP") != std::string::npos);
  CHECK(expand_error("@rack1").find("no groups file is set up") != std::string::npos);
}

TEST_CASE("host list: groups name groups, cycles and bad definitions are errors") {
  const HostGroups cyclic("a: n1,@b\nb: @c\nc: n2,@a\nok: n3\nbad: n[3-1]\nuses-bad: @bad\n", "cyc");
  const HostListOptions g{&cyclic, {}};
  CHECK(expand_names("@ok", g) == Names{"n3"});
  CHECK(expand_error_with("@a", g) ==
        "cyc:1: cyc:2: cyc:3: group '@a' includes itself (@a at cyc:1 -> @b at cyc:2 -> @c at cyc:3 -> @a)");
  CHECK(expand_error_with("x,@uses-bad", g) ==
        "cyc:6: cyc:5: bad host list 'n[3-1]': range 3-1 runs backwards (write n[1-3])");
  const HostGroups self("me: @me\n", "self");
  CHECK(expand_error_with("@me", HostListOptions{&self, {}}).find("includes itself (@me at self:1 -> @me)") !=
        std::string::npos);
}

TEST_CASE("host list: wildcards select from the group all") {
  const auto g = with_groups();
  CHECK(expand_names("n*", g) == Names{"n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8"});
  CHECK(expand_names("login?", g) == Names{"login1", "login2"});
  CHECK(expand_names("*1", g) == Names{"n1", "login1", "db1"});
  CHECK(expand_names("n[1-2]*", g) == Names{"n1", "n2"});
  CHECK(expand_names("*!n*", g) == Names{"login1", "login2", "db1"});
  CHECK(expand_names("x*", g).empty());
  CHECK(texts(expand_host_list("bob@db*:2222", g)) == Names{"db1:2222"});
  CHECK(expand_host_list("bob@db*:2222", g).at(0).user == "bob");

  CHECK(expand_error("n*").find("no groups file is set up (a host name cannot hold '*' or '?')") !=
        std::string::npos);
  const HostGroups no_all("rack1: n1\n", "g2");
  CHECK(expand_error_with("n?", HostListOptions{&no_all, {}}) ==
        "bad host list 'n?': '*' and '?' select hosts of the group 'all', which groups file 'g2' "
        "(source 'local') does not define (add a line 'all: HOSTS')");
  CHECK(expand_error_with("@*", HostListOptions{&no_all, {}}).find("does not define") != std::string::npos);
}

TEST_CASE("host list: select_hosts combines -w, -H and -x as pdsh does") {
  TempDir dir;
  const auto file = dir.write("hosts", "h[1-3]\n");
  using V = std::vector<std::string>;
  CHECK(names(select_hosts(V{"a,b"}, {}, {})) == Names{"a", "b"});
  // An exclusion or filter in one -w applies to every -w and -H.
  CHECK(names(select_hosts(V{"a,b,c", "-b"}, {}, {})) == Names{"a", "c"});
  CHECK(names(select_hosts(V{"foo[0-20]", "-/[1-9]$/"}, {}, {})) == Names{"foo0", "foo10", "foo20"});
  CHECK(names(select_hosts(V{"foo1,bar1", "/^foo/"}, {}, {})) == Names{"foo1"});
  CHECK(names(select_hosts(V{"-h2"}, V{file.string()}, {})) == Names{"h1", "h3"});
  // -x names what to leave out, filters included.
  CHECK(names(select_hosts(V{"foo[9-11]"}, {}, V{"foo10"})) == Names{"foo9", "foo11"});
  CHECK(names(select_hosts(V{"foo[0-20]"}, {}, V{"/[1-9]$/"})) == Names{"foo0", "foo10", "foo20"});
  CHECK(names(select_hosts(V{"foo[8-13]"}, {}, V{"^" + file.string(), "foo[9-12]!foo10"})) ==
        Names{"foo8", "foo10", "foo13"});
  CHECK(names(select_hosts(V{"@rack1"}, {}, V{"@odd"}, with_groups())) == Names{"n2", "n4"});
  CHECK(error_of<UsageError>([] { select_hosts({"a"}, {}, {"-a"}); }).find("in a list that already excludes") !=
        std::string::npos);
}

TEST_CASE("host list: pdsh's #include in hosts files") {
  TempDir dir;
  std::filesystem::create_directory(dir.path() / "sub");
  dir.write("sub/B", "foo10\n");
  const auto a = dir.write("sub/A", "foo1\nfoo2\n#include B\n# include is a comment\n #include B\n");
  CHECK(names(read_hosts_file(a)) == std::vector<std::string>{"foo1", "foo2", "foo10"});
  CHECK(names(expand_host_list("^" + a.string())) == std::vector<std::string>{"foo1", "foo2", "foo10"});
  const auto absolute = dir.write("abs", "#include " + (dir.path() / "sub/B").string() + "\n");
  CHECK(names(read_hosts_file(absolute)) == std::vector<std::string>{"foo10"});

  const auto garbage = dir.write("garbage", "#include B garbage\n");
  CHECK(error_of<UsageError>([&] { read_hosts_file(garbage); }) ==
        garbage.string() + ":1: bad host list '#include B garbage': #include takes one file name "
                           "(write #include FILE)");
  const auto missing = dir.write("missing", "a\n#include nope\n");
  CHECK(error_of<UsageError>([&] { read_hosts_file(missing); })
            .rfind(missing.string() + ":2: cannot read hosts file '" + (dir.path() / "nope").string() + "'", 0) ==
        0);
  const auto self = dir.write("self", "#include self\n");
  CHECK(error_of<UsageError>([&] { read_hosts_file(self); }).find("includes itself") != std::string::npos);
}

// --- The corpus, against nodeset -e live -------------------------------------------

namespace {

// The lines of a corpus file that are not comments or blank.
std::vector<std::string> corpus_lines(const std::string& name) {
  std::ifstream in(tpush::test::host_list_fixtures() / name);
  REQUIRE(in);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line.front() == '#') continue;
    lines.push_back(line);
  }
  return lines;
}

std::string with_fixtures(std::string text) {
  const std::string dir = tpush::test::host_list_fixtures().string();
  for (auto at = text.find("{fixtures}"); at != std::string::npos; at = text.find("{fixtures}"))
    text.replace(at, 10, dir);
  return text;
}

// A host list's hosts as a set of `[user@]text`, or "error".
struct ListOutcome {
  bool error = false;
  std::set<std::string> hosts;
  bool operator==(const ListOutcome&) const = default;
};

std::ostream& operator<<(std::ostream& os, const ListOutcome& o) {
  if (o.error) return os << "error";
  std::string sep;
  for (const auto& h : o.hosts) os << std::exchange(sep, ",") << h;
  return os;
}

ListOutcome tpush_outcome(const std::string& expr, const HostListOptions& options) {
  try {
    ListOutcome o;
    for (const auto& h : expand_host_list(expr, options)) o.hosts.insert((h.user.empty() ? "" : h.user + "@") + h.text);
    return o;
  } catch (const UsageError&) {
    return ListOutcome{true, {}};
  }
}

// nodeset's groups.conf for the corpus's groups file: the flat-file source that
// ClusterShell's own groups.conf defines as "local" (by absolute path: nodeset runs
// the upcalls in groups.conf's directory).
std::string write_groups_conf(const tpush::test::TempDir& dir) {
  const auto groups = (tpush::test::host_list_fixtures() / "groups").string();
  const auto conf = dir / "groups.conf";
  std::ofstream(conf) << "[Main]\ndefault: local\n[local]\n"
                      << "map: sed -n 's/^$GROUP:\\(.*\\)/\\1/p' " << groups << "\n"
                      << "all: sed -n 's/^all:\\(.*\\)/\\1/p' " << groups << "\n"
                      << "list: sed -n 's/^\\([0-9A-Za-z_-]*\\):.*/\\1/p' " << groups << "\n";
  return conf.string();
}

// `nodeset -e` of each expression, one host per line.
std::optional<std::vector<ListOutcome>> nodeset_outcomes(const std::vector<std::string>& exprs) {
  tpush::test::TempDir dir;
  const std::string conf = write_groups_conf(dir);
  std::vector<std::vector<std::string>> cases;
  for (const auto& e : exprs) cases.push_back({"--groupsconf=" + conf, "-S", "\\n", "-e", "--", e});
  const auto runs = tpush::test::run_nodeset(cases);
  if (!runs) return std::nullopt;
  std::vector<ListOutcome> out;
  for (const auto& r : *runs) {
    ListOutcome o{r.rc != 0, {}};
    std::size_t start = 0;
    while (!o.error && start < r.out.size()) {
      const auto nl = r.out.find('\n', start);
      const auto end = nl == std::string::npos ? r.out.size() : nl;
      if (end > start) o.hosts.insert(r.out.substr(start, end - start));
      start = end + 1;
    }
    out.push_back(std::move(o));
  }
  return out;
}

}  // namespace

TEST_CASE("host list: the corpus agrees with nodeset -e") {
  const auto groups = HostGroups::read(tpush::test::host_list_fixtures() / "groups");
  const HostListOptions options{&groups, {}};
  const auto exprs = corpus_lines("nodeset_agrees.txt");
  REQUIRE(exprs.size() > 100);
  const auto nodeset = nodeset_outcomes(exprs);
  if (!nodeset) return;
  for (std::size_t i = 0; i < exprs.size(); ++i) {
    CAPTURE(exprs[i]);
    CHECK(tpush_outcome(exprs[i], options) == (*nodeset)[i]);
  }
}

TEST_CASE("host list: where tpush differs from nodeset -e, and why") {
  const auto groups = HostGroups::read(tpush::test::host_list_fixtures() / "groups");
  const HostListOptions options{&groups, {}};
  std::vector<std::string> exprs;
  std::vector<ListOutcome> expected;
  for (const auto& line : corpus_lines("tpush_differs.txt")) {
    const auto tab = line.find('\t');
    const auto tab2 = line.find('\t', tab + 1);
    REQUIRE(tab != std::string::npos);
    REQUIRE(tab2 != std::string::npos);
    REQUIRE(tab2 + 1 < line.size());  // a reason is given
    exprs.push_back(with_fixtures(line.substr(0, tab)));
    const std::string hosts = line.substr(tab + 1, tab2 - tab - 1);
    ListOutcome o{hosts == "error", {}};
    if (!o.error && hosts != "-") {
      for (std::size_t start = 0; start <= hosts.size();) {
        const auto comma = std::min(hosts.find(',', start), hosts.size());
        o.hosts.insert(hosts.substr(start, comma - start));
        start = comma + 1;
      }
    }
    expected.push_back(std::move(o));
  }
  for (std::size_t i = 0; i < exprs.size(); ++i) {
    CAPTURE(exprs[i]);
    CHECK(tpush_outcome(exprs[i], options) == expected[i]);
  }
  const auto nodeset = nodeset_outcomes(exprs);
  if (!nodeset) return;
  for (std::size_t i = 0; i < exprs.size(); ++i) {
    CAPTURE(exprs[i]);
    CHECK_MESSAGE((*nodeset)[i] != expected[i], "nodeset now agrees: move the line to nodeset_agrees.txt");
  }
}

TEST_CASE("host list: tpu:NAME stands for a TPU's workers, also in groups and exclusions") {
  const HostGroups groups("pods: tpu:pod[1-2]\nmixed: @pods,node1\n", "groups");
  const HostListOptions options{&groups, {}};
  const auto hosts = expand_host_list("@mixed,tpu:solo", options);
  CHECK(texts(hosts) == Names{"tpu:pod1", "tpu:pod2", "node1", "tpu:solo"});
  CHECK(tpush::inventory::tpu_member(hosts[0]) == "pod1");
  CHECK(tpush::inventory::tpu_member(hosts[2]).empty());
  CHECK(texts(select_hosts({"@mixed"}, {}, {"tpu:pod2"}, options)) == Names{"tpu:pod1", "node1"});
  // A host called tpu with a port is still a host.
  CHECK(tpush::inventory::tpu_member(expand_host_list("tpu:22").at(0)).empty());
  HostListOptions hinted;
  hinted.no_groups_hint = "write 'NAME: HOSTS' lines in /g";
  CHECK(expand_error_with("@x", hinted).find("(no groups file is set up: write 'NAME: HOSTS' lines in /g; a host") !=
        std::string::npos);
  CHECK(expand_error("tpu:pod:22").find("a TPU item is tpu:NAME, without user@ or :port") != std::string::npos);
}

TEST_CASE("host list: duplicates dropped across large lists, lines and files, in order") {
  // The set of hosts grows through many tables; what it keeps is what a plain
  // "seen" set keeps.
  std::string expr = "n[1-5000],n[2500-7500],alice@n[1-10],n[1-10]:22,alice@n[1-10]";
  const auto hosts = expand_host_list(expr);
  std::vector<HostSpec> expected;
  std::set<std::tuple<std::string, std::string, uint16_t>> seen;
  const auto add = [&](const std::string& user, const std::string& host, uint16_t port) {
    if (seen.emplace(user, host, port).second)
      expected.push_back({user, host, port, port != 0 ? host + ":" + std::to_string(port) : host});
  };
  for (int i = 1; i <= 5000; ++i) add("", "n" + std::to_string(i), 0);
  for (int i = 2500; i <= 7500; ++i) add("", "n" + std::to_string(i), 0);
  for (int i = 1; i <= 10; ++i) add("alice", "n" + std::to_string(i), 0);
  for (int i = 1; i <= 10; ++i) add("", "n" + std::to_string(i), 22);
  CHECK(hosts.size() == 7520);
  CHECK(hosts == expected);

  // One line at a time, 20,000 lines with every name twice: each line's hosts
  // join the list's.
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "h" + std::to_string(i % 10000) + "\n";
  const auto from_file = parse_hosts_text(text, "hosts");
  REQUIRE(from_file.size() == 10000);
  CHECK(from_file.front().host == "h0");
  CHECK(from_file.back().host == "h9999");
}
