#include "tpush/commands/cli/prompt_line.h"

#include <array>

#include "tpush/util/string.h"

namespace tpush::commands {
namespace {

using Kind = PromptLine::Kind;
using util::trim;

struct Word {
  std::string_view name;
  Kind kind;
};

constexpr std::array kWords{
    Word{"help", Kind::help},     Word{"h", Kind::help},         Word{"workers", Kind::workers},
    Word{"w", Kind::workers},     Word{"add", Kind::add},        Word{"drop", Kind::drop},
    Word{"only", Kind::only},     Word{"all", Kind::all},        Word{"failed", Kind::failed},
    Word{"gather", Kind::gather}, Word{"stream", Kind::stream},  Word{"leader", Kind::leader},
    Word{"diff", Kind::diff},     Word{"quit", Kind::quit},      Word{"q", Kind::quit},
};

}  // namespace

PromptLine parse_prompt_line(std::string_view line) {
  const std::string_view s = trim(line);
  if (s.empty()) return {};
  if (s == "quit" || s == "exit") return {Kind::quit, {}};
  if (s == "?") return {Kind::workers, {}};
  if (s == "=") return {Kind::gather, {}};
  switch (s.front()) {
    case '!': return {Kind::local, std::string(trim(s.substr(1)))};
    case '+': return {Kind::add, std::string(trim(s.substr(1)))};
    case '-': return {Kind::drop, std::string(trim(s.substr(1)))};
    case '@': return {Kind::only, std::string(trim(s.substr(1)))};
    case ':': break;
    default: return {Kind::run, std::string(s)};
  }
  const std::string_view rest = s.substr(1);
  const auto space = rest.find_first_of(" \t");
  const std::string_view word = rest.substr(0, space);
  const std::string arg(space == std::string_view::npos ? std::string_view() : trim(rest.substr(space)));
  for (const auto& w : kWords)
    if (w.name == word) return {w.kind, arg};
  return {Kind::unknown, std::string(word)};
}

std::string prompt_help() {
  return "Each line runs on the workers shown in the prompt; these are the prompt's own:\n"
         "  :help             this list\n"
         "  :workers, ?       the workers the next line runs on\n"
         "  :add EXPR, +EXPR  add workers (a host list: w[4-7], node12)\n"
         "  :drop EXPR, -EXPR leave workers out of the next lines\n"
         "  :only EXPR, @EXPR run on these workers only\n"
         "  :all              every worker again\n"
         "  :failed           only the workers that did not succeed on the last line\n"
         "  :gather, =        gathered output (as -b); = switches back and forth\n"
         "  :stream           streamed output, each line with its worker (the default)\n"
         "  :leader [LABEL]   stream one worker, the others where they differ (--leader)\n"
         "  :diff             the most common output, the others as diffs (--diff); again: off\n"
         "  !CMD              run CMD here, in a local shell\n"
         "  :quit, quit, Ctrl-D  leave\n"
         "Ctrl-C stops the running line on every worker; at the prompt it drops the line typed so far.\n";
}

}  // namespace tpush::commands
