// The command line each worker's shell receives (commands/run).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tpush/commands/run.h"
#include "tpush/inventory/worker.h"
#include "tpush/util/shell_quote.h"
#include "test_shell_support.h"

using tpush::commands::remote_command_line;
using tpush::inventory::Worker;
using tpush::util::shell_quote;
using tpush::test::nul_fields;
using tpush::test::sh;
using tpush::test::tricky_values;

TEST_CASE("remote command line: exports TPUSH_WORKER and TPUSH_NUM_WORKERS") {
  Worker w;
  w.label = "h";
  const std::string line = remote_command_line("echo \"$TPUSH_WORKER/$TPUSH_NUM_WORKERS\"", w, 3, 64);
  CHECK(line == "export TPUSH_WORKER=3 TPUSH_NUM_WORKERS=64; echo \"$TPUSH_WORKER/$TPUSH_NUM_WORKERS\"");
  CHECK(sh(line) == "3/64\n");
  // Exported, so child processes see them too.
  CHECK(sh(remote_command_line("/bin/sh -c 'printf %s-%s \"$TPUSH_WORKER\" \"$TPUSH_NUM_WORKERS\"'", w, 0, 1)) ==
        "0-1");
}

TEST_CASE("remote command line: exports a worker's extra env, quoted") {
  Worker w;
  // One subshell per value, all in one /bin/sh.
  std::string script;
  for (const auto& v : tricky_values()) {
    w.env.clear();
    w.env.emplace_back("TPUSH_SLICE", v);
    script += "(" + remote_command_line("printf '%s\\0' \"$TPUSH_SLICE\"", w, 1, 2) + ")\n";
  }
  const auto got = nul_fields(sh(script));
  REQUIRE(got.size() == tricky_values().size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    CAPTURE(tricky_values()[i]);
    CHECK(got[i] == tricky_values()[i]);
  }
  w.env = {{"A", "one two"}, {"B", "it's $x"}};
  CHECK(sh(remote_command_line("printf '%s|%s|%s|%s' \"$TPUSH_WORKER\" \"$TPUSH_NUM_WORKERS\" \"$A\" \"$B\"",
                               w, 5, 8)) == "5|8|one two|it's $x");
}

TEST_CASE("remote command line: a worker's extra TPUSH_WORKER overrides the default") {
  Worker w;
  w.env = {{"TPUSH_WORKER", "7"}, {"EXTRA", "x"}};
  const std::string line = remote_command_line("printf %s \"$TPUSH_WORKER\"", w, 2, 16);
  CHECK(line == "export TPUSH_WORKER=7 TPUSH_NUM_WORKERS=16 EXTRA=x; printf %s \"$TPUSH_WORKER\"");
  CHECK(sh(line) == "7");
}

TEST_CASE("remote command line: the user's command is passed through verbatim") {
  Worker w;
  const std::string cmd = "for i in 1 2; do echo \"$i\"; done | tr '\\n' ' '";
  const std::string line = remote_command_line(cmd, w, 0, 1);
  CHECK(line.size() >= cmd.size());
  CHECK(line.compare(line.size() - cmd.size(), cmd.size(), cmd) == 0);
  CHECK(sh(line) == "1 2 ");
}
