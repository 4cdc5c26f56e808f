#include <doctest/doctest.h>

#include "tpush/util/strings.h"

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
