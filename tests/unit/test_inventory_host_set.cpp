// The hosts without duplicates and the set algebra of host lists (host_set.h).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tpush/inventory/host_list.h"
#include "tpush/inventory/host_set.h"

namespace {

using tpush::inventory::combine_hosts;
using tpush::inventory::dedup_hosts;
using tpush::inventory::exclude_hosts;
using tpush::inventory::expand_host_list;
using tpush::inventory::HostSet;
using tpush::inventory::HostSpec;

std::vector<std::string> host_texts(const std::vector<HostSpec>& hosts) {
  std::vector<std::string> out;
  for (const auto& h : hosts) out.push_back(h.text);
  return out;
}

std::vector<std::string> host_names(const std::vector<HostSpec>& hosts) {
  std::vector<std::string> out;
  for (const auto& h : hosts) out.push_back(h.host);
  return out;
}

HostSet host_set_of(const std::string& expr) {
  HostSet set;
  set.add_all(expand_host_list(expr));
  return set;
}

}  // namespace

TEST_CASE("host set: each host once, in the order added") {
  HostSet set;
  CHECK(set.add({"", "b", 0, "b"}));
  CHECK(set.add({"", "a", 0, "a"}));
  CHECK_FALSE(set.add({"", "b", 0, "b-label"}));  // the same user, host and port
  CHECK(set.add({"u", "b", 0, "b"}));
  CHECK(set.add({"", "b", 22, "b:22"}));
  CHECK(host_texts(set.hosts()) == std::vector<std::string>{"b", "a", "b", "b:22"});
  std::vector<HostSpec> many;
  for (int i = 0; i < 1000; ++i) many.push_back({"", "n" + std::to_string(i % 500), 0, ""});
  set.add_all(many);
  CHECK(set.hosts().size() == 4 + 500);
}

TEST_CASE("host set: ClusterShell's operators") {
  const HostSet left = host_set_of("a,b,c,alice@d"), right = host_set_of("b,c:22,d,e");
  // c:22 is not c (a port named must match); d with no user is alice@d.
  CHECK(host_names(combine_hosts('!', left, right).hosts()) == std::vector<std::string>{"a", "c"});
  CHECK(host_texts(combine_hosts('&', left, right).hosts()) == std::vector<std::string>{"b", "d"});
  // Then right's hosts left does not match: c (any port) matches c:22; alice@d is not d.
  CHECK(host_texts(combine_hosts('^', left, right).hosts()) == std::vector<std::string>{"a", "c", "d", "e"});
  // The right side is a filter: a user or port it names must match, else any does.
  CHECK(host_names(combine_hosts('&', host_set_of("alice@x,bob@x,x:2"), host_set_of("x")).hosts()) ==
        std::vector<std::string>{"x", "x", "x"});
}

TEST_CASE("host set: dedup_hosts") {
  std::vector<HostSpec> hosts{{"", "a", 0, "a"},  {"", "b", 0, "b"},     {"", "a", 0, "a"},
                              {"u", "a", 0, "a"}, {"", "a", 22, "a:22"}, {"", "b", 0, "b-label"}};
  const auto unique = dedup_hosts(hosts);
  REQUIRE(unique.size() == 4);
  CHECK(unique[0] == hosts[0]);
  CHECK(unique[1] == hosts[1]);  // the first b, with its own text
  CHECK(unique[2] == hosts[3]);
  CHECK(unique[3] == hosts[4]);
  CHECK(dedup_hosts({}).empty());
}

TEST_CASE("host set: exclude_hosts") {
  const auto all = expand_host_list("a,alice@b,c:2222,alice@c,d,bob@d:22");

  CHECK(host_names(exclude_hosts(all, expand_host_list("a,d"))) ==
        std::vector<std::string>{"b", "c", "c"});
  // A user in the exclusion must match.
  CHECK(host_texts(exclude_hosts(all, expand_host_list("bob@b,alice@c"))) ==
        std::vector<std::string>{"a", "b", "c:2222", "d", "d:22"});
  // A port in the exclusion must match.
  CHECK(host_texts(exclude_hosts(all, expand_host_list("c:2222,d:2200"))) ==
        std::vector<std::string>{"a", "b", "c", "d", "d:22"});
  // Both.
  CHECK(host_texts(exclude_hosts(all, expand_host_list("bob@d:22"))) ==
        std::vector<std::string>{"a", "b", "c:2222", "c", "d"});
  // Ranges in exclusions, and names that match nothing.
  CHECK(host_names(exclude_hosts(expand_host_list("n[1-5]"), expand_host_list("n[2-3],zz"))) ==
        std::vector<std::string>{"n1", "n4", "n5"});
  CHECK(exclude_hosts(all, {}) == all);
  CHECK(exclude_hosts({}, all).empty());
}
