// Splitting ssh_config lines as OpenSSH 9.2 does.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tpush/ssh_config/line.h"

using namespace tpush::ssh_config;
using Args = std::vector<std::string>;

namespace {
ConfigLine split(const std::string& text) {
  ConfigLine line;
  const std::string err = split_config_line(text, line);
  REQUIRE_MESSAGE(err.empty(), err);
  return line;
}
}  // namespace

TEST_CASE("ssh_config line: keyword and arguments") {
  CHECK(split("Port 22").keyword == "port");
  CHECK(split("Port 22").args == Args{"22"});
  CHECK(split("HostName=example.com").args == Args{"example.com"});
  CHECK(split("HostName = example.com").args == Args{"example.com"});
  CHECK(split("  HostName\t=\texample.com  \r\n").args == Args{"example.com"});
  CHECK(split("Host a b\tc").args == Args{"a", "b", "c"});
  CHECK(split("PORT 22").keyword == "port");
  // Only one `=` separates: a second belongs to the value.
  CHECK(split("Port==22").args == Args{"=22"});
  CHECK(split("User=a=b").args == Args{"a=b"});
}

TEST_CASE("ssh_config line: blank lines and comments") {
  ConfigLine line;
  for (const char* text : {"", "   ", "# comment", "   # indented", "\t\r\n", "#Port 22"}) {
    CHECK(split_config_line(text, line).empty());
    CHECK(line.keyword.empty());
  }
  CHECK(split("Port 22 # the usual").args == Args{"22"});
  CHECK(split("IdentityFile /keys/id#1").args == Args{"/keys/id#1"});
  CHECK(split("Host a #b c").args == Args{"a"});
}

TEST_CASE("ssh_config line: quotes and backslashes") {
  CHECK(split("IdentityFile \"/a b/c\"").args == Args{"/a b/c"});
  CHECK(split("IdentityFile '/a b/c'").args == Args{"/a b/c"});
  CHECK(split("IdentityFile /a\\ b").args == Args{"/a b"});
  CHECK(split("User \"it's\"").args == Args{"it's"});
  CHECK(split("User a\\\"b").args == Args{"a\"b"});
  CHECK(split("User a\\xb").args == Args{"a\\xb"});  // an unknown escape stays
  CHECK(split("User x\"y z\"w").args == Args{"xy zw"});
  CHECK(split("User \"\"").args == Args{""});
  // The rest of the line keeps the quotes (ProxyCommand and ProxyJump read it).
  CHECK(split("ProxyCommand \"nc\" %h %p").rest == "\"nc\" %h %p");
}

TEST_CASE("ssh_config line: errors") {
  ConfigLine line;
  CHECK(split_config_line("Port", line) == "no argument after keyword \"port\"");
  CHECK(split_config_line("Port =", line) == "no argument after keyword \"port\"");
  CHECK(split_config_line("User \"unterminated", line) == "unbalanced quotes");
  CHECK(line.keyword == "user");
  // A comment has no argument: that is not "no argument".
  CHECK(split_config_line("User # nobody", line).empty());
  CHECK(line.args.empty());
}

TEST_CASE("ssh_config line: Match words split on blanks and one '='") {
  MatchWords words("host=a,b  user \"x y\" # tail");
  bool unbalanced = false;
  CHECK(words.next(unbalanced) == "host");
  CHECK(words.next(unbalanced) == "a,b");
  CHECK(words.next(unbalanced) == "user");
  CHECK(words.next(unbalanced) == "x y");
  CHECK(words.next(unbalanced) == "#");
  CHECK(words.rest() == "tail");
  MatchWords bad("host \"open");
  CHECK(bad.next(unbalanced) == "host");
  CHECK_FALSE(bad.next(unbalanced).has_value());
  CHECK(unbalanced);
  MatchWords last("all");
  CHECK(last.next(unbalanced) == "all");
  CHECK_FALSE(last.next(unbalanced).has_value());
  CHECK_FALSE(last.rest().has_value());
}
