// What a line typed at the interactive prompt asks for.
#include <doctest/doctest.h>

#include "tpush/commands/cli/prompt_line.h"

namespace {

using tpush::commands::parse_prompt_line;
using Kind = tpush::commands::PromptLine::Kind;

TEST_CASE("prompt line: anything not the prompt's own is a command for the workers, trimmed") {
  CHECK(parse_prompt_line("  uptime ").kind == Kind::run);
  CHECK(parse_prompt_line("  uptime ").arg == "uptime");
  CHECK(parse_prompt_line("exit 3").kind == Kind::run);  // only a bare exit leaves
  CHECK(parse_prompt_line("echo :help").arg == "echo :help");
  CHECK(parse_prompt_line(" \t ").kind == Kind::nothing);
}

TEST_CASE("prompt line: clush's spellings") {
  CHECK(parse_prompt_line("+w[4-7]").kind == Kind::add);
  CHECK(parse_prompt_line("+ w[4-7]").arg == "w[4-7]");
  CHECK(parse_prompt_line("-w3").kind == Kind::drop);
  CHECK(parse_prompt_line("-w3").arg == "w3");
  CHECK(parse_prompt_line("@node[1-2]").kind == Kind::only);
  CHECK(parse_prompt_line("=").kind == Kind::gather);
  CHECK(parse_prompt_line("?").kind == Kind::workers);
  CHECK(parse_prompt_line("!ls -l").kind == Kind::local);
  CHECK(parse_prompt_line("!ls -l").arg == "ls -l");
  CHECK(parse_prompt_line("quit").kind == Kind::quit);
  CHECK(parse_prompt_line("exit").kind == Kind::quit);
}

TEST_CASE("prompt line: words after a colon with their argument, and an unknown word named back") {
  CHECK(parse_prompt_line(":add  w[1-2] ").kind == Kind::add);
  CHECK(parse_prompt_line(":add  w[1-2] ").arg == "w[1-2]");
  CHECK(parse_prompt_line(":leader w3").kind == Kind::leader);
  CHECK(parse_prompt_line(":leader w3").arg == "w3");
  CHECK(parse_prompt_line(":leader").arg.empty());
  CHECK(parse_prompt_line(":failed").kind == Kind::failed);
  CHECK(parse_prompt_line(":q").kind == Kind::quit);
  CHECK(parse_prompt_line(":diff").kind == Kind::diff);
  const auto unknown = parse_prompt_line(":frob now");
  CHECK(unknown.kind == Kind::unknown);
  CHECK(unknown.arg == "frob");
}

}  // namespace
