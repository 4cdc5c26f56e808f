// A unified diff of two texts, line by line, in the notation of GNU `diff -u`
// (what `patch` reads): hunks with `context` lines around each change, headed
// "@@ -a,b +c,d @@" (",b" left out when a range has one line; an empty range
// names the line before it, "-0,0" at the start), each change as its removed
// lines ("-") then its added lines ("+"), and "\ No newline at end of file"
// after a last line that has no newline. Hunks whose contexts meet are one.
//
// Only the hunks: the "---"/"+++" lines name what was compared, which the
// caller knows (--diff names node sets there).
//
// The edit script is Myers' O(ND) one, found by bisection in linear space
// (Myers 1986, section 4b, as GNU diff does it), so a few changes in 100,000
// lines cost little. Its work has a bound, so two large unrelated texts cannot
// take minutes: see DiffOptions::work_limit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tpush::output {

struct DiffOptions {
  // Unchanged lines shown before and after each change.
  std::size_t context = 3;
  // Appends one line's text (without its '\n') to `out`: nullptr appends the
  // bytes as they are; `append_for_terminal` (terminal_text.h) escapes them.
  void (*append_line)(std::string& out, std::string_view line) = nullptr;
  // Steps (diagonals tried plus lines compared) the search may spend before
  // it stops looking for a shortest edit script; 0: a default that grows with
  // the texts (64 per line, plus 4 million). What is left to compare when it
  // runs out is written as "delete all of it, insert all of it": still a
  // correct diff, just not the shortest.
  std::uint64_t work_limit = 0;
};

struct UnifiedDiff {
  std::string hunks;     // from the first "@@" on; empty when the texts are the same
  bool shortest = true;  // false: the work limit was reached (see DiffOptions)
};

UnifiedDiff unified_diff(std::string_view from, std::string_view to, const DiffOptions& options = {});

}  // namespace tpush::output
