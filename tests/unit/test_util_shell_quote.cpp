// util::shell_quote, checked against a real /bin/sh.
#include <doctest/doctest.h>

#include <stdexcept>
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

TEST_CASE("fill in: each placeholder becomes its value, values are not searched again") {
  using tpush::util::fill_in;
  CHECK(fill_in("f=@DIR@/in.@N@; exec cat > \"$f\" # @DIR@", {{"@DIR@", "/tmp/a"}, {"@N@", "@DIR@"}}) ==
        "f=/tmp/a/in.@DIR@; exec cat > \"$f\" # /tmp/a");
  // "$@", an email or an @ alone are no placeholders.
  CHECK(fill_in("set -- \"$@\" x@y @ @@ @a@ @X@", {{"@X@", "1"}}) == "set -- \"$@\" x@y @ @@ @a@ 1");
}

TEST_CASE("fill in: a placeholder left over or a name the script lacks is tpush's mistake") {
  using tpush::util::fill_in;
  CHECK_THROWS_AS(fill_in("echo @A@ @B@", {{"@A@", "1"}}), std::logic_error);
  CHECK_THROWS_AS(fill_in("echo @A@", {{"@A@", "1"}, {"@C@", "3"}}), std::logic_error);
}

TEST_CASE("one line: a one-line script file without its newline") {
  using tpush::util::one_line;
  static_assert(one_line("a; b\n") == "a; b");
  CHECK_THROWS_AS(one_line("a\nb\n"), std::logic_error);
  CHECK_THROWS_AS(one_line("a"), std::logic_error);
  CHECK_THROWS_AS(one_line(""), std::logic_error);
}
