// OpenSSH's match.c patterns, as ssh_config and known_hosts use them.
#include <doctest/doctest.h>

#include <string>

#include "tpush/util/pattern.h"

using namespace tpush::util;

TEST_CASE("pattern: * and ? match, everything else literally and case-sensitively") {
  CHECK(pattern_match("web-01", "web-??"));
  CHECK_FALSE(pattern_match("web-1", "web-??"));
  CHECK(pattern_match("web-123", "web-*"));
  CHECK(pattern_match("web-", "web-*"));
  CHECK(pattern_match("a.b.c", "*.b.*"));
  CHECK(pattern_match("", "*"));
  CHECK_FALSE(pattern_match("", "?"));
  CHECK(pattern_match("aXbXc", "a*b*c"));
  CHECK_FALSE(pattern_match("aXbXd", "a*b*c"));
  CHECK(pattern_match("abcabd", "*abd"));
  CHECK_FALSE(pattern_match("Web", "web"));
  CHECK(pattern_match("a,b", "a,b"));  // no list syntax here
  CHECK(pattern_match("x", "**x**"));
}

TEST_CASE("pattern: lists with negation") {
  CHECK(pattern_list_match("alice", "bob,alice", false) == PatternListMatch::positive);
  CHECK(pattern_list_match("carol", "bob,alice", false) == PatternListMatch::none);
  CHECK(pattern_list_match("alice", "*,!alice", false) == PatternListMatch::negated);
  CHECK(pattern_list_match("alice", "!alice,*", false) == PatternListMatch::negated);
  CHECK(pattern_list_match("bob", "!alice", false) == PatternListMatch::none);  // a negation alone never matches
  CHECK(pattern_list_match("Alice", "alice", false) == PatternListMatch::none);
  CHECK(pattern_list_match("alice", "ALICE", true) == PatternListMatch::positive);
  CHECK(pattern_list_match("x", "", false) == PatternListMatch::none);
  CHECK(pattern_list_match("a", "a,", false) == PatternListMatch::positive);
  // OpenSSH gives up on a pattern of 1023 characters or more.
  const std::string long_pattern(1023, '*');
  CHECK(pattern_list_match("x", long_pattern, false) == PatternListMatch::none);
  CHECK(pattern_list_match("x", std::string(1022, '*'), false) == PatternListMatch::positive);
}

TEST_CASE("pattern: host names compare lowercase") {
  CHECK(hostname_list_match("Web1.Example.COM", "*.example.com") == PatternListMatch::positive);
  CHECK(hostname_list_match("web1.example.com", "*.EXAMPLE.com,!web1*") == PatternListMatch::negated);
}
