#include "tpush/inventory/node_set.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "test_nodeset_support.h"
#include "tpush/inventory/host_list.h"

namespace {

using tpush::inventory::expand_host_list;
using tpush::inventory::fold_node_set;
using tpush::inventory::host_list_expresses;
using Labels = std::vector<std::string>;

Labels numbered(const std::string& prefix, int first, int last, const std::string& suffix = "",
                int width = 0) {
  Labels out;
  for (int i = first; i <= last; ++i) {
    std::string n = std::to_string(i);
    if (static_cast<int>(n.size()) < width) n.insert(0, static_cast<std::size_t>(width) - n.size(), '0');
    out.push_back(prefix + n + suffix);
  }
  return out;
}

Labels operator+(Labels a, const Labels& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The labels that expanding `folded` gives, as a set.
std::set<std::string> expanded(const std::string& folded) {
  std::set<std::string> out;
  for (const auto& h : expand_host_list(folded)) out.insert(h.text);
  return out;
}

// Random label sets in the shapes tpush produces. Every number position draws from
// a small range so that ranges and products actually form.
class LabelGenerator {
 public:
  explicit LabelGenerator(unsigned seed) : rng_(seed) {}

  int below(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

  std::string number(int max, bool may_pad) {
    std::string n = std::to_string(below(max + 1));
    if (may_pad && below(3) == 0) n.insert(0, static_cast<std::size_t>(1 + below(2)), '0');
    return n;
  }

  // One family of labels: same shape, random numbers.
  Labels family(int shape, bool may_pad, std::size_t count) {
    Labels out;
    for (std::size_t i = 0; i < count; ++i) out.push_back(label(shape, may_pad));
    return out;
  }

  std::string label(int shape, bool may_pad) {
    switch (shape) {
      case 0: return "node" + number(40, may_pad);
      case 1: return "w" + number(20, may_pad);
      case 2: return "s" + number(3, may_pad) + "w" + number(9, may_pad);
      case 3: return "r" + number(2, may_pad) + "c" + number(3, may_pad) + "n" + number(4, may_pad);
      case 4: return "10.0." + number(2, false) + "." + number(20, false);
      case 5: return "tpu-a/s" + number(2, may_pad) + "w" + number(7, may_pad);
      case 6: return "n" + number(15, may_pad) + "-ib.example.com";
      case 7: return "127.0.1." + number(12, false) + ":2222";
      case 8: return std::string(1, static_cast<char>('a' + below(4))) + "host";
      case 9: return "x" + number(30, may_pad) + ":22";
      default: return number(99, may_pad);
    }
  }

 private:
  std::mt19937 rng_;
};

}  // namespace

TEST_CASE("node set: folds what nodeset folds") {
  CHECK(fold_node_set({}) == "");
  CHECK(fold_node_set({"a"}) == "a");
  CHECK(fold_node_set(numbered("w", 0, 3) + numbered("w", 5, 7)) == "w[0-3,5-7]");
  CHECK(fold_node_set(numbered("node", 1, 16, "", 2)) == "node[01-16]");
  CHECK(fold_node_set(numbered("node", 8, 12)) == "node[8-12]");
  CHECK(fold_node_set(numbered("s0w", 0, 3)) == "s0w[0-3]");
  CHECK(fold_node_set(numbered("s0w", 0, 3) + numbered("s1w", 0, 3)) == "s[0-1]w[0-3]");
  CHECK(fold_node_set(numbered("s0w", 0, 3) + numbered("s1w", 0, 3) + numbered("s2w", 0, 1)) ==
        "s[0-1]w[0-3],s2w[0-1]");
  CHECK(fold_node_set(numbered("127.0.1.", 1, 12)) == "127.0.1.[1-12]");
  CHECK(fold_node_set(numbered("tpu-a/w", 0, 3)) == "tpu-a/w[0-3]");
  CHECK(fold_node_set(numbered("gpu-#", 1, 4)) == "gpu-#[1-4]");  // nodeset -f gives the same
  CHECK(fold_node_set(numbered("n", 1, 3, ".example.com")) == "n[1-3].example.com");
  CHECK(fold_node_set({"beta", "alpha", "n1"}) == "alpha,beta,n1");
  // Padding: 1 and 01 are different numbers; a padded run keeps its width.
  CHECK(fold_node_set({"n1", "n01", "n10"}) == "n[1,01,10]");
  CHECK(fold_node_set(numbered("n", 1, 9) + numbered("n", 1, 10, "", 2)) == "n[1-9,01-10]");
  CHECK(fold_node_set({"n0", "n00", "n000", "n001"}) == "n[0,00,000-001]");
  CHECK(fold_node_set({"n098", "n099", "n100"}) == "n[098-100]");
  // Numbers longer than any integer type fold up to 18 digits, as many as a bracket
  // group takes; longer ones stay literal (nodeset would fold them, but tpush could
  // not read that back).
  CHECK(fold_node_set({"n99999999999999999", "n100000000000000000"}) == "n[99999999999999999-100000000000000000]");
  CHECK(fold_node_set({"n99999999999999999999999", "n100000000000000000000000"}) ==
        "n100000000000000000000000,n99999999999999999999999");
}

TEST_CASE("node set: order does not depend on the input") {
  Labels labels = numbered("s0w", 0, 7) + numbered("s1w", 0, 3) + Labels{"login", "n3", "10.0.0.1"};
  const std::string folded = fold_node_set(labels);
  CHECK(folded == "10.0.0.1,login,n3,s0w[0-7],s1w[0-3]");
  std::mt19937 rng(7);
  for (int i = 0; i < 20; ++i) {
    std::shuffle(labels.begin(), labels.end(), rng);
    Labels doubled = labels + labels;
    CHECK(fold_node_set(doubled) == folded);
  }
}

TEST_CASE("node set: ports stay literal, IPv6 and the inexpressible are listed whole") {
  CHECK(fold_node_set(numbered("127.0.1.", 1, 12, ":2222")) == "127.0.1.[1-12]:2222");
  CHECK(fold_node_set(numbered("w", 0, 3, ":22")) == "w[0-3]:22");
  // nodeset writes h1:[22-23]; tpush cannot read a range in a port.
  CHECK(fold_node_set({"h1:22", "h1:23"}) == "h1:22,h1:23");
  CHECK(fold_node_set({"h1:22", "h2:22", "h1:23", "h2:23"}) == "h[1-2]:22,h[1-2]:23");
  CHECK(fold_node_set({"h1", "h2:22", "h3"}) == "h[1,3],h2:22");
  CHECK(fold_node_set({"[::2]:22", "2001:db8::5", "[::1]:22", "fe80::1%eth0"}) ==
        "2001:db8::5,[::1]:22,[::2]:22,fe80::1%eth0");
  CHECK(fold_node_set({"a b", "n1", "x,y", "-n2", "^f", "", "n2"}) == "-n2,^f,a b,n[1-2],x,y");
}

TEST_CASE("node set: which labels host-list syntax expresses") {
  for (const std::string ok : {"w12", "s1w3", "tpu-a/w3", "host.example.com", "10.0.0.1", "h:22",
                         "[::1]:22", "[fe80::1%eth0]:2222", "2001:db8::5", "::1", "n%1", "a_b", "a#b"}) {
    CAPTURE(ok);
    CHECK(host_list_expresses(ok));
  }
  for (const std::string bad : {"", "a b", "a,b", "u@h", "a!b", "a&b", "a^b", "n*", "n?", "-n", "/re/",
                          "^file", "#include", "#c", "@group", "[::1]", "h:022", "h:0", "h:x", "g:h:i", "n[1]", "n]",
                          "tab\there", "bell\a"}) {
    CAPTURE(bad);
    CHECK_FALSE(host_list_expresses(bad));
  }
}

TEST_CASE("node set: expanding the fold gives the labels back") {
  LabelGenerator gen(20261123);
  for (int round = 0; round < 400; ++round) {
    Labels labels;
    const int families = 1 + gen.below(3);
    for (int f = 0; f < families; ++f) {
      labels = labels + gen.family(gen.below(11), gen.below(2) == 0,
                                   static_cast<std::size_t>(1 + gen.below(40)));
    }
    if (gen.below(4) == 0) labels.push_back(gen.below(2) ? "[fe80::1]:22" : "2001:db8::" + gen.number(9, false));
    const std::string folded = fold_node_set(labels);
    CAPTURE(folded);
    CHECK(expanded(folded) == std::set<std::string>(labels.begin(), labels.end()));
  }
}

TEST_CASE("node set: numbers too long for a bracket group stay literal (fuzz)") {
  // What the fuzzer found: n1111111111111111111111111[9-11] expands to three labels
  // whose 26- and 27-digit numbers folded into n[...] that the parser refuses.
  Labels labels;
  for (const auto& host : expand_host_list("n1111111111111111111111111[9-11]")) labels.push_back(host.text);
  REQUIRE(labels.size() == 3);
  const std::string folded = fold_node_set(labels);
  CHECK(folded == "n111111111111111111111111110,n111111111111111111111111111,n11111111111111111111111119");
  CHECK(expanded(folded) == std::set<std::string>(labels.begin(), labels.end()));
  // 18 digits still fold; the other numbers of a label with a longer run too.
  CHECK(fold_node_set({"n111111111111111111", "n111111111111111112"}) == "n[111111111111111111-111111111111111112]");
  CHECK(fold_node_set({"r1-1111111111111111111", "r2-1111111111111111111"}) == "r[1-2]-1111111111111111111");
}

TEST_CASE("node set: the same text as nodeset -f") {
  // Cases nodeset and tpush must agree on: no ports that vary within a pattern
  // (tpush keeps ports literal) and no IPv6 (listed whole).
  std::vector<Labels> cases = {
      numbered("w", 0, 3) + numbered("w", 5, 7),
      numbered("node", 1, 16, "", 2),
      numbered("n", 1, 9) + numbered("n", 1, 10, "", 2),
      {"n0", "n00", "n000", "n001", "n1", "n01", "n10"},
      numbered("s0w", 0, 3) + numbered("s1w", 0, 3) + numbered("s2w", 0, 1),
      numbered("127.0.1.", 1, 12),
      numbered("127.0.1.", 1, 12, ":2222"),
      numbered("tpu-a/w", 0, 3) + numbered("tpu-b/w", 0, 3),
      {"alpha", "beta", "n1", "10.0.0.1", "n%1", "x_y"},
  };
  LabelGenerator gen(42);
  for (int round = 0; round < 300; ++round) {
    Labels labels;
    const int families = 1 + gen.below(3);
    for (int f = 0; f < families; ++f) {
      labels = labels + gen.family(gen.below(11), gen.below(2) == 0,
                                   static_cast<std::size_t>(1 + gen.below(60)));
    }
    cases.push_back(labels);
  }
  std::vector<std::vector<std::string>> args;
  for (const auto& labels : cases) args.push_back(Labels{"-f"} + labels);
  const auto nodeset = tpush::test::run_nodeset(args);
  if (!nodeset) return;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    CAPTURE(i);
    REQUIRE((*nodeset)[i].rc == 0);
    CHECK(fold_node_set(cases[i]) == (*nodeset)[i].out);
  }
}
