// Small string helpers (util/string).
#include <doctest/doctest.h>

#include "tpush/util/string.h"

using namespace tpush::util;

TEST_CASE("strings: ASCII lowercase and case-insensitive equality") {
  CHECK(ascii_lowercase("HostName-X_1") == "hostname-x_1");
  CHECK(ascii_lowercase("\xc3\x84") == "\xc3\x84");  // bytes above ASCII are left alone
  CHECK(iequals("StrictHostKeyChecking", "stricthostkeychecking"));
  CHECK_FALSE(iequals("port", "ports"));
  CHECK(iequals("", ""));
}

TEST_CASE("strings: edit distance") {
  CHECK(edit_distance("hostname", "hostname") == 0);
  CHECK(edit_distance("hostnme", "hostname") == 1);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("kitten", "sitting") == 3);
}

TEST_CASE("strings: trim, join and split") {
  CHECK(trim(" \t a b \r\n") == "a b");
  CHECK(trim("   ").empty());
  CHECK(trim("\v\fa\f") == "a");
  CHECK(trim(" \ta\v\r", " \t\r") == "a\v");  // only the blanks given
  CHECK(trim("xxaxbxx", "x") == "axb");
  CHECK(trim("xx", "x").empty());
  CHECK(trim("", "x").empty());
  CHECK(join({"a", "b", "c"}, ", ") == "a, b, c");
  CHECK(join({}, ",").empty());
  CHECK(split("a,,b", ',') == std::vector<std::string>{"a", "", "b"});
  CHECK(split("", ',') == std::vector<std::string>{""});
}

TEST_CASE("strings: printable escapes control characters and keeps UTF-8") {
  CHECK(printable("a\tb\nc\r\x1b[31m") == "a\\tb\\nc\\r\\x1b[31m");
  CHECK(printable("back\\slash") == "back\\\\slash");
  CHECK(printable("caf\xc3\xa9") == "caf\xc3\xa9");
  CHECK(printable(std::string("nul\0x", 5)) == "nul\\x00x");
}

TEST_CASE("strings: is_utf8 accepts UTF-8 and refuses what is not, utf8_length says where") {
  CHECK(is_utf8(""));
  CHECK(is_utf8("plain ascii"));
  CHECK(is_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  CHECK_FALSE(is_utf8("\xff"));
  CHECK_FALSE(is_utf8("\xc3"));              // cut short
  CHECK_FALSE(is_utf8("\xc0\xaf"));          // overlong '/'
  CHECK_FALSE(is_utf8("\xed\xa0\x80"));      // a surrogate
  CHECK_FALSE(is_utf8("\xf4\x90\x80\x80"));  // beyond U+10FFFF
  const std::string_view s = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xff\xfe";
  CHECK(utf8_length(s, 0) == 1);
  CHECK(utf8_length(s, 1) == 2);
  CHECK(utf8_length(s, 2) == 0);  // inside a character
  CHECK(utf8_length(s, 3) == 3);
  CHECK(utf8_length(s, 6) == 4);
  CHECK(utf8_length(s, 10) == 0);
  CHECK(utf8_length(s, 11) == 0);
}

TEST_CASE("strings: durations as --persist takes them") {
  using std::chrono::seconds;
  CHECK(parse_duration("90") == seconds{90});
  CHECK(parse_duration("90s") == seconds{90});
  CHECK(parse_duration("10m") == seconds{600});
  CHECK(parse_duration("2h") == seconds{7200});
  CHECK(parse_duration("1d") == seconds{86400});
  CHECK(parse_duration("0") == seconds{0});
  CHECK(parse_duration("off") == seconds{0});
  CHECK(parse_duration("no") == seconds{0});
  CHECK_FALSE(parse_duration(""));
  CHECK_FALSE(parse_duration("m"));
  CHECK_FALSE(parse_duration("10 m"));
  CHECK_FALSE(parse_duration("10min"));
  CHECK_FALSE(parse_duration("-5"));
  CHECK_FALSE(parse_duration("1.5h"));
  CHECK_FALSE(parse_duration("367d"));           // over a year
  CHECK_FALSE(parse_duration("99999999999999"));  // no overflow
}
