// --diff's unified diff of arbitrary worker output: two texts (the input cut at
// its first NUL, or in half), diffed with the default work bound and with a
// tiny one. Invariants: the hunks are well formed (headers whose counts match
// their lines, markers only ' ', '-', '+' and '\'), applying them to the first
// text gives the second byte for byte, and equal texts give no hunks.
#include <cstdlib>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "tpush/output/unified_diff.h"

using tpush::output::DiffOptions;
using tpush::output::unified_diff;

namespace {

// The text's lines, each with its '\n' when it has one.
std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const std::size_t n = nl == std::string_view::npos ? text.size() : nl + 1;
    out.emplace_back(text.substr(0, n));
    text.remove_prefix(n);
  }
  return out;
}

// "-a,b" or "-a" (b = 1) after the marker; false when malformed.
bool range(const std::string& s, std::size_t& at, std::size_t& start, std::size_t& count) {
  char* end = nullptr;
  start = std::strtoul(s.c_str() + at, &end, 10);
  count = 1;
  if (*end == ',') count = std::strtoul(end + 1, &end, 10);
  at = static_cast<std::size_t>(end - s.c_str());
  return true;
}

// Applies `hunks` to `from`, checking every context and removed line.
std::string apply(std::string_view from, const std::string& hunks) {
  const auto old = lines_of(from);
  const auto diff = lines_of(hunks);
  std::string out;
  std::size_t next_old = 0;  // index of the next line of `old` not yet copied
  for (std::size_t i = 0; i < diff.size();) {
    const std::string& head = diff[i++];
    FUZZ_CHECK(head.rfind("@@ -", 0) == 0);
    std::size_t at = 4, a = 0, b = 0, c = 0, d = 0;
    range(head, at, a, b);
    FUZZ_CHECK(head.compare(at, 2, " +") == 0);
    at += 2;
    range(head, at, c, d);
    FUZZ_CHECK(head.compare(at, 4, " @@\n") == 0);
    const std::size_t first = b == 0 ? a : a - 1;  // an empty range names the line before it
    FUZZ_CHECK(first >= next_old && first <= old.size());
    for (; next_old < first; ++next_old) out += old[next_old];
    // The hunk's lines as (marker, text); "\ No newline" takes the newline off the one before.
    std::vector<std::pair<char, std::string>> body;
    for (; i < diff.size() && diff[i].rfind("@@", 0) != 0; ++i) {
      const std::string& l = diff[i];
      FUZZ_CHECK(l.size() >= 2 && l.back() == '\n');
      if (l[0] == '\\') {
        FUZZ_CHECK(l == "\\ No newline at end of file\n" && !body.empty() && body.back().second.back() == '\n');
        body.back().second.pop_back();
        continue;
      }
      FUZZ_CHECK(l[0] == ' ' || l[0] == '-' || l[0] == '+');
      body.emplace_back(l[0], l.substr(1));
    }
    std::size_t removed = 0, added = 0;
    for (const auto& [marker, text] : body) {
      if (marker != '+') {
        FUZZ_CHECK(next_old < old.size() && old[next_old] == text);
        ++next_old;
        ++removed;
      }
      if (marker != '-') {
        out += text;
        ++added;
      }
    }
    FUZZ_CHECK(removed == b && added == d);
  }
  for (; next_old < old.size(); ++next_old) out += old[next_old];
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input = tpush::fuzz::as_text(data, size);
  const auto cut = input.find('\0');
  const std::string_view from = cut == std::string_view::npos ? input.substr(0, size / 2) : input.substr(0, cut);
  const std::string_view to = cut == std::string_view::npos ? input.substr(size / 2) : input.substr(cut + 1);
  for (const std::uint64_t limit : {std::uint64_t{0}, std::uint64_t{8}}) {
    DiffOptions options;
    options.work_limit = limit;
    const auto diff = unified_diff(from, to, options);
    if (from == to) FUZZ_CHECK(diff.hunks.empty());
    FUZZ_CHECK(apply(from, diff.hunks) == to);
  }
  return 0;
}
