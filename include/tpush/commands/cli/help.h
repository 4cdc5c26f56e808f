// One help formatter for `tpush --help` and every `tpush SUBCOMMAND --help`:
//
//   TITLE: what it does, wrapped
//
//   Usage: tpush [OPTIONS] ...
//
//   [a preface: the subcommand list, notes]
//
//   GROUP:
//     -l, --user USER      description, wrapped under itself
//
//   [a footer]
//
// Options print in the order their groups first appear (a subcommand's own
// options first), each with the value name it was given with option_text()
// ("SECONDS"; choices as "{auto,always,never}"). Lines are wrapped to the
// terminal's width, or 80 columns when stdout is not a terminal.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}

namespace tpush::commands {

struct HelpPage {
  std::string title;                // first paragraph
  std::vector<std::string> usage;   // each line follows "Usage: " (or its indent)
  std::string preface;              // printed as is, before the options
  std::string footer;               // wrapped, after the options
};

std::string format_help(const CLI::App& app, const HelpPage& page, std::size_t width);

// The width help is wrapped to: stdout's terminal columns (at least 60), else 80.
std::size_t help_width();

// `text` wrapped to `width` columns; every line after the first is indented by
// `indent` spaces (the first is assumed to start there already). Existing
// newlines are kept.
std::string wrap(std::string_view text, std::size_t width, std::size_t indent);

}  // namespace tpush::commands
