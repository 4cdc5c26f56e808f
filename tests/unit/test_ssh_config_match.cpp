// Whether Host and Match lines apply.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tpush/ssh_config/match.h"

using namespace tpush::ssh_config;
using Patterns = std::vector<std::string>;
using Type = MatchCriterion::Type;

TEST_CASE("ssh_config match: Host lines") {
  CHECK(host_line_applies(Patterns{"web*"}, "web1"));
  CHECK(host_line_applies(Patterns{"db", "web*"}, "web1"));
  CHECK_FALSE(host_line_applies(Patterns{"web*", "!web1"}, "web1"));
  CHECK_FALSE(host_line_applies(Patterns{"!web1", "web*"}, "web1"));
  CHECK(host_line_applies(Patterns{"!web1", "web*"}, "web2"));
  CHECK_FALSE(host_line_applies(Patterns{"!web1"}, "web2"));  // a negation alone never applies
  CHECK_FALSE(host_line_applies(Patterns{}, "web1"));
  CHECK_FALSE(host_line_applies(Patterns{"web1"}, "WEB1"));  // as written, case-sensitive
  CHECK_FALSE(host_line_applies(Patterns{"a,b"}, "a"));      // no comma lists on Host lines
}

TEST_CASE("ssh_config match: Match criteria all hold") {
  const MatchSubject s{"web1.example.com", "Web1", "deploy", "alice"};
  const auto applies = [&](std::vector<MatchCriterion> c) { return match_line_applies(c, s); };
  CHECK(applies({{Type::all, false, ""}}));
  CHECK_FALSE(applies({{Type::all, true, ""}}));
  CHECK(applies({{Type::host, false, "*.EXAMPLE.com"}}));
  CHECK_FALSE(applies({{Type::host, false, "*.example.com,!web1*"}}));
  CHECK(applies({{Type::original_host, false, "web1"}}));  // lowercase on both sides
  CHECK(applies({{Type::user, false, "ops,deploy"}}));
  CHECK_FALSE(applies({{Type::user, false, "Deploy"}}));  // users are case-sensitive
  CHECK(applies({{Type::local_user, false, "al*"}}));
  CHECK(applies({{Type::local_user, true, "root"}}));
  CHECK(applies({{Type::host, false, "web1*"}, {Type::user, false, "deploy"}}));
  CHECK_FALSE(applies({{Type::host, false, "web1*"}, {Type::user, true, "deploy"}}));
  CHECK(applies({}));
}
