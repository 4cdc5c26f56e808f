// util::shell_quote and the remote command line, checked against a real /bin/sh.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>
#include <vector>

#include "tpush/commands/run.h"
#include "tpush/inventory/worker.h"
#include "tpush/util/shell_quote.h"
#include "test_support.h"

namespace {

using tpush::commands::remote_command_line;
using tpush::inventory::Worker;
using tpush::util::shell_quote;

// Runs `script` with /bin/sh -c and returns its stdout. The script itself is
// passed through shell_quote to the outer shell that popen uses.
std::string sh(const std::string& script) {
  auto r = tpush::test::run_shell("/bin/sh -c " + shell_quote(script));
  CHECK(r.status == 0);
  return r.out;
}

// Splits `text` at NUL bytes (each field ends with one).
std::vector<std::string> nul_fields(const std::string& text) {
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

const std::vector<std::string>& tricky_values() {
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

}  // namespace

TEST_CASE("shell quote: /bin/sh reads back exactly the quoted bytes") {
  // One shell for all values: printf '%s\0' <q1> <q2> ... and split at NUL.
  std::string script = "printf '%s\\0'";
  for (const auto& v : tricky_values()) script += " " + shell_quote(v);
  const auto got = nul_fields(sh(script));
  REQUIRE(got.size() == tricky_values().size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(tricky_values()[i]);
    CHECK(got[i] == tricky_values()[i]);
  }
}

TEST_CASE("shell quote: safe words stay bare, everything else is quoted") {
  CHECK(shell_quote("abc-DEF_0.9/x") == "abc-DEF_0.9/x");
  CHECK(shell_quote("") == "''");
  CHECK(shell_quote("a b") == "'a b'");
  CHECK(shell_quote("it's") == "'it'\\''s'");
  CHECK(shell_quote("~") != "~");
  CHECK(shell_quote("*") != "*");
}

TEST_CASE("shell quote: a quoted value is one word") {
  // `set --` with the quoted word must give exactly one positional parameter.
  std::string script;
  for (const auto& v : tricky_values()) script += "set -- " + shell_quote(v) + "; printf '%s\\0' $#\n";
  const auto got = nul_fields(sh(script));
  REQUIRE(got.size() == tricky_values().size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(tricky_values()[i]);
    CHECK(got[i] == "1");
  }
}
