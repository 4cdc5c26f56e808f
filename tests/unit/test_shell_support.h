// Helpers for the tests that check quoting against a real /bin/sh: run a
// script, split NUL-terminated fields, and values that need every kind of
// quoting.
#pragma once

#include <string>
#include <vector>

#include "test_support.h"
#include "tpush/util/shell_quote.h"

namespace tpush::test {

// Runs `script` with /bin/sh -c and returns its stdout. The script itself is
// passed through shell_quote to the outer shell that popen uses.
inline std::string sh(const std::string& script) {
  auto r = tpush::test::run_shell("/bin/sh -c " + util::shell_quote(script));
  CHECK(r.status == 0);
  return r.out;
}

// Splits `text` at NUL bytes (each field ends with one).
inline std::vector<std::string> nul_fields(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\0') {
      out.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  CHECK(start == text.size());
  return out;
}

inline const std::vector<std::string>& tricky_values() {
  static const std::vector<std::string> values = {
      "plain",
      "",
      "two words",
      "  leading and trailing  ",
      "it's",
      "'",
      "''",
      "\"double\" quotes",
      "a'b\"c'd",
      "line1\nline2\n",
      "\n",
      "tab\there",
      "$HOME",
      "${PATH}",
      "$(echo no)",
      "`echo no`",
      "back\\slash\\",
      "\\'",
      "!bang !! !$",
      "*",
      "?",
      "[a-z]",
      "~",
      "~root",
      "a;b&c|d>e<f",
      "#comment",
      "-n",
      "--",
      "x=1",
      "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80",
      "\xff\xfe latin1 \xe9",
      "%s %d %%",
      "a:b,c@d+e/f.g_h-i",
  };
  return values;
}

}  // namespace tpush::test
