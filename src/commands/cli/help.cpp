#include "tpush/commands/cli/help.h"

#include <unistd.h>

#include <CLI/CLI.hpp>

#include <algorithm>

#include "tpush/util/terminal.h"

namespace tpush::commands {
namespace {

constexpr std::size_t kNameColumn = 2;
constexpr std::size_t kMaxNameWidth = 28;  // longer names put their text on the next line

// "-l, --user USER"
std::string option_names(const CLI::Option& opt) {
  std::string out;
  for (const auto& s : opt.get_snames()) out += (out.empty() ? "-" : ", -") + s;
  for (const auto& l : opt.get_lnames()) out += (out.empty() ? "--" : ", --") + l;
  if (!opt.get_option_text().empty()) out += " " + opt.get_option_text();
  return out;
}

}  // namespace

std::size_t help_width() {
  if (const auto columns = util::terminal_columns(STDOUT_FILENO)) return std::max<std::size_t>(*columns, 60);
  return 80;
}

std::string wrap(std::string_view text, std::size_t width, std::size_t indent) {
  std::string out;
  std::size_t column = indent;
  bool line_start = true;
  const std::string pad(indent, ' ');
  while (!text.empty()) {
    if (text.front() == '\n') {
      out += '\n';
      text.remove_prefix(1);
      if (!text.empty()) out += pad;
      column = indent;
      line_start = true;
      continue;
    }
    if (text.front() == ' ' && !line_start) {  // the space between words
      text.remove_prefix(1);
      continue;
    }
    std::size_t end = 0;
    while (end < text.size() && text[end] != ' ' && text[end] != '\n') ++end;
    const std::string_view word = text.substr(0, end);
    if (!line_start && column + 1 + word.size() > width) {
      out += '\n' + pad;
      column = indent;
      line_start = true;
    }
    if (!line_start) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
    line_start = false;
    text.remove_prefix(end);
  }
  return out;
}

std::string format_help(const CLI::App& app, const HelpPage& page, std::size_t width) {
  std::string out = wrap(page.title, width, 0) + "\n\n";
  for (std::size_t i = 0; i < page.usage.size(); ++i)
    out += (i == 0 ? "Usage: " : "       ") + wrap(page.usage[i], width, 7) + "\n";
  if (!page.preface.empty()) out += "\n" + page.preface;

  std::vector<std::string> groups;
  const auto options = app.get_options([](const CLI::Option* o) { return o->nonpositional(); });
  for (const CLI::Option* opt : options)
    if (!opt->get_group().empty() && std::find(groups.begin(), groups.end(), opt->get_group()) == groups.end())
      groups.push_back(opt->get_group());
  std::size_t name_width = 0;
  for (const CLI::Option* opt : options)
    name_width = std::max(name_width, std::min(option_names(*opt).size(), kMaxNameWidth));
  const std::size_t text_column = kNameColumn + name_width + 2;

  for (const auto& group : groups) {
    out += "\n" + group + ":\n";
    for (const CLI::Option* opt : options) {
      if (opt->get_group() != group) continue;
      const std::string names = option_names(*opt);
      std::string line = std::string(kNameColumn, ' ') + names;
      if (names.size() > name_width) line += "\n" + std::string(text_column, ' ');
      else line += std::string(text_column - kNameColumn - names.size(), ' ');
      out += line + wrap(opt->get_description(), width, text_column) + "\n";
    }
  }
  if (!page.footer.empty()) out += "\n" + wrap(page.footer, width, 0) + "\n";
  return out;
}

}  // namespace tpush::commands
