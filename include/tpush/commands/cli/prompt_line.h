// What a line typed at the interactive prompt asks for: a command for the
// workers, or one of the prompt's own (a word after ':', or clush's spelling).
#pragma once

#include <string>
#include <string_view>

namespace tpush::commands {

struct PromptLine {
  enum class Kind {
    nothing,  // blank
    run,      // arg: the command for the workers
    help,     // :help
    workers,  // :workers, ?
    add,      // :add EXPR, +EXPR
    drop,     // :drop EXPR, -EXPR
    only,     // :only EXPR, @EXPR
    all,      // :all
    failed,   // :failed
    gather,   // :gather, = (toggles, as clush's =)
    stream,   // :stream
    leader,   // :leader [LABEL]
    diff,     // :diff (toggles)
    local,    // !CMD: arg is CMD, run here
    quit,     // :quit, :q, quit, exit
    unknown,  // arg: the word after ':'
  } kind = Kind::nothing;
  std::string arg;
};

PromptLine parse_prompt_line(std::string_view line);

// The prompt's own commands, for :help.
std::string prompt_help();

}  // namespace tpush::commands
