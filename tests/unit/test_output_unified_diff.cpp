// The unified diff --diff prints: the hunks GNU `diff -u` writes for the same
// two texts (each expected text below is what diff -u 3.8 printed, from its
// first "@@"), and, for many random texts, a diff that a strict applier turns
// back into the new text. The work limit keeps unrelated large texts cheap.
#include <doctest/doctest.h>

#include <charconv>
#include <chrono>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "tpush/output/unified_diff.h"

namespace {

using tpush::output::DiffOptions;
using tpush::output::unified_diff;

std::string hunks_of(std::string_view from, std::string_view to) { return unified_diff(from, to).hunks; }

// The lines of a text, each with its '\n' (the last may have none).
std::vector<std::string> lines_with_ends(std::string_view text) {
  std::vector<std::string> out;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t nl = text.find('\n', at);
    const std::size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    out.emplace_back(text.substr(at, end - at));
    at = end;
  }
  return out;
}

// "-a,b" or "+c,d" (",1" left out) from a hunk header: the start and the count.
std::pair<std::size_t, std::size_t> parse_hunk_range(std::string_view text) {
  std::size_t start = 0, count = 1;
  auto [p, ec] = std::from_chars(text.data() + 1, text.data() + text.size(), start);
  REQUIRE(ec == std::errc());
  if (p != text.data() + text.size()) {
    REQUIRE(*p == ',');
    REQUIRE(std::from_chars(p + 1, text.data() + text.size(), count).ec == std::errc());
  }
  return {start, count};
}

// What `patch` does, strictly: every context and removed line must be the old
// text's, with or without its newline as the marker says; every hunk's counts
// must add up; hunks come in order.
std::string apply_diff(std::string_view old_text, std::string_view diff) {
  const std::vector<std::string> old_lines = lines_with_ends(old_text);
  const std::vector<std::string> diff_lines = lines_with_ends(diff);
  const std::string no_newline = "\\ No newline at end of file\n";
  std::string out;
  std::size_t next = 0;                    // the next old line
  std::size_t written = 0;                 // lines in `out`
  std::size_t old_left = 0, new_left = 0;  // what the current hunk still holds
  for (std::size_t i = 0; i < diff_lines.size(); ++i) {
    const std::string& raw = diff_lines[i];
    REQUIRE(raw.back() == '\n');
    const std::string_view line(raw.data(), raw.size() - 1);
    // The line's text as it is in its file: the marker after it takes the newline away.
    const bool marked = i + 1 < diff_lines.size() && diff_lines[i + 1] == no_newline;
    const std::string text = std::string(line.substr(1)) + (marked ? "" : "\n");
    if (line.starts_with("@@ ")) {
      REQUIRE((old_left == 0 && new_left == 0));
      const std::size_t space = line.find(' ', 3), space2 = line.find(' ', space + 1);
      REQUIRE(line.substr(space2) == " @@");
      const auto [old_start, old_count] = parse_hunk_range(line.substr(3, space - 3));
      const auto [new_start, new_count] = parse_hunk_range(line.substr(space + 1, space2 - space - 1));
      const std::size_t first = old_count == 0 ? old_start : old_start - 1;
      REQUIRE(first >= next);
      for (; next < first; ++next, ++written) out += old_lines.at(next);
      CHECK(new_start == (new_count == 0 ? written : written + 1));
      old_left = old_count, new_left = new_count;
    } else if (line[0] == ' ' || line[0] == '-') {
      REQUIRE(next < old_lines.size());
      REQUIRE(old_lines[next++] == text);
      REQUIRE(old_left-- > 0);
      if (line[0] == ' ') {
        out += text, ++written;
        REQUIRE(new_left-- > 0);
      }
    } else if (line[0] == '+') {
      out += text, ++written;
      REQUIRE(new_left-- > 0);
    } else {
      FAIL("not a line of a hunk (a marker must follow a line): " << raw);
    }
    if (marked) ++i;
  }
  REQUIRE((old_left == 0 && new_left == 0));
  for (; next < old_lines.size(); ++next) out += old_lines[next];
  return out;
}

}  // namespace

TEST_CASE("unified_diff: the same texts make no hunks") {
  CHECK(hunks_of("", "").empty());
  CHECK(hunks_of("a\nb\n", "a\nb\n").empty());
  CHECK(hunks_of("a\nb", "a\nb").empty());
  CHECK(unified_diff("a\n", "a\n").shortest);
}

TEST_CASE("unified_diff: a line added at the start or at the end") {
  CHECK(hunks_of("b\nc\n", "a\nb\nc\n") == "@@ -1,2 +1,3 @@\n+a\n b\n c\n");
  CHECK(hunks_of("a\nb\n", "a\nb\nc\n") == "@@ -1,2 +1,3 @@\n a\n b\n+c\n");
}

TEST_CASE("unified_diff: a line deleted, with three lines of context at most") {
  CHECK(hunks_of("a\nb\nc\nd\ne\n", "a\nb\nd\ne\n") == "@@ -1,5 +1,4 @@\n a\n b\n-c\n d\n e\n");
}

TEST_CASE("unified_diff: a change in the middle, removed lines before added ones") {
  CHECK(hunks_of("1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\n3\n4\nX\n6\n7\n8\n9\n") ==
        "@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+X\n 6\n 7\n 8\n");
  CHECK(hunks_of("a\nb\nc\n", "a\nB1\nB2\nc\n") == "@@ -1,3 +1,4 @@\n a\n-b\n+B1\n+B2\n c\n");
}

TEST_CASE("unified_diff: changes six lines apart share a hunk, seven apart do not") {
  CHECK(hunks_of("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", "1\nX\n3\n4\n5\n6\n7\n8\nY\n10\n11\n12\n") ==
        "@@ -1,12 +1,12 @@\n 1\n-2\n+X\n 3\n 4\n 5\n 6\n 7\n 8\n-9\n+Y\n 10\n 11\n 12\n");
  CHECK(hunks_of("1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n", "1\nX\n3\n4\n5\n6\n7\n8\n9\n10\nY\n12\n13\n") ==
        "@@ -1,5 +1,5 @@\n 1\n-2\n+X\n 3\n 4\n 5\n"
        "@@ -8,6 +8,6 @@\n 8\n 9\n 10\n-11\n+Y\n 12\n 13\n");
}

TEST_CASE("unified_diff: a last line without a newline is marked, and differs from one with it") {
  const std::string mark = "\\ No newline at end of file\n";
  CHECK(hunks_of("a\nb", "a\nc") == "@@ -1,2 +1,2 @@\n a\n-b\n" + mark + "+c\n" + mark);
  CHECK(hunks_of("a\nb", "a\nb\n") == "@@ -1,2 +1,2 @@\n a\n-b\n" + mark + "+b\n");
  CHECK(hunks_of("a\nb\n", "a\nb") == "@@ -1,2 +1,2 @@\n a\n-b\n+b\n" + mark);
  CHECK(hunks_of("x\na", "y\na") == "@@ -1,2 +1,2 @@\n-x\n+y\n a\n" + mark);  // context, marked once
}

TEST_CASE("unified_diff: an empty side is the range 0,0") {
  CHECK(hunks_of("", "a\nb\n") == "@@ -0,0 +1,2 @@\n+a\n+b\n");
  CHECK(hunks_of("a\nb\n", "") == "@@ -1,2 +0,0 @@\n-a\n-b\n");
  CHECK(hunks_of("", "x") == "@@ -0,0 +1 @@\n+x\n\\ No newline at end of file\n");
}

TEST_CASE("unified_diff: each line's text goes through append_line, the marks do not") {
  DiffOptions options;
  options.append_line = [](std::string& out, std::string_view line) {
    for (char c : line) out += c == '\r' ? std::string("^M") : std::string(1, c);
  };
  CHECK(unified_diff("a\r\nb\n", "a\r\nc\r\n", options).hunks == "@@ -1,2 +1,2 @@\n a^M\n-b\n+c^M\n");
}

TEST_CASE("unified_diff: random texts, the diff applied gives the new text") {
  std::mt19937 rng(20261127);
  const std::vector<std::string> words = {"a\n", "b\n", "c\n", "d\n", "", "e", "a"};
  auto text = [&](std::size_t n) {
    std::string t;
    for (std::size_t i = 0; i < n; ++i) t += words[rng() % 4];
    if (rng() % 4 == 0) t += words[4 + rng() % 3];  // sometimes no final newline
    return t;
  };
  for (int round = 0; round < 3000; ++round) {
    const std::string from = text(rng() % 14), to = text(rng() % 14);
    DiffOptions options;
    options.context = rng() % 4;
    if (round % 5 == 0) options.work_limit = 1 + rng() % 20;  // the fallback must be a correct diff too
    const auto diff = unified_diff(from, to, options);
    CAPTURE(from);
    CAPTURE(to);
    CAPTURE(diff.hunks);
    CHECK(apply_diff(from, diff.hunks) == to);
    CHECK(diff.hunks.empty() == (from == to));
  }
}

TEST_CASE("unified_diff: the edit script is a shortest one") {
  // Lines only in one text are changes, whatever the work limit; a minimal
  // script changes nothing else: count the '-' and '+' lines.
  std::mt19937 rng(7);
  for (int round = 0; round < 500; ++round) {
    std::string from, to;
    std::size_t changed = 0;
    for (int i = 0; i < 40; ++i) {
      const std::string line = std::to_string(i) + "\n";
      switch (rng() % 5) {
        case 0: from += "old" + line, ++changed; break;
        case 1: to += "new" + line, ++changed; break;
        default: from += line, to += line;
      }
    }
    const auto diff = unified_diff(from, to);
    std::size_t marked = 0;
    for (const std::string& l : lines_with_ends(diff.hunks)) marked += l[0] == '-' || l[0] == '+';
    CHECK(marked == changed);
    CHECK(diff.shortest);
  }
}

TEST_CASE("unified_diff: 100,000 lines with a few changes give small hunks") {
  std::string from, to;
  for (int i = 0; i < 100'000; ++i) {
    const std::string line = "line " + std::to_string(i) + "\n";
    from += line;
    to += i == 10 || i == 50'000 || i == 99'999 ? "changed\n" : line;
  }
  const auto diff = unified_diff(from, to);
  CHECK(diff.shortest);
  CHECK(diff.hunks ==
        "@@ -8,7 +8,7 @@\n line 7\n line 8\n line 9\n-line 10\n+changed\n line 11\n line 12\n line 13\n"
        "@@ -49998,7 +49998,7 @@\n line 49997\n line 49998\n line 49999\n-line 50000\n+changed\n"
        " line 50001\n line 50002\n line 50003\n"
        "@@ -99997,4 +99997,4 @@\n line 99996\n line 99997\n line 99998\n-line 99999\n+changed\n");
}

TEST_CASE("unified_diff: two unrelated large texts stop at the work limit, still correct") {
  // Every other line shared: a shortest script exists but costs O(N^2) to find.
  std::string from, to;
  for (int i = 0; i < 200'000; ++i) {
    from += (i % 2 ? "x" : "shared ") + std::to_string(i) + "\n";
    to += (i % 2 ? "y" : "shared ") + std::to_string(i * 7 % 200'000) + "\n";
  }
  const auto started = std::chrono::steady_clock::now();
  const auto diff = unified_diff(from, to);
  const auto took = std::chrono::steady_clock::now() - started;
  CHECK_FALSE(diff.shortest);
  CHECK(took < std::chrono::seconds(20));  // about a second here; unbounded, hours
  CHECK(apply_diff(from, diff.hunks) == to);
}
