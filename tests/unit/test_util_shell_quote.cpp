// util::shell_quote, checked against a real /bin/sh.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tpush/util/shell_quote.h"
#include "test_shell_support.h"

using tpush::util::shell_quote;
using tpush::test::nul_fields;
using tpush::test::sh;
using tpush::test::tricky_values;

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
