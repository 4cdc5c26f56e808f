#pragma once

#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace tpush::util {

// Quotes `value` for a POSIX shell so it reads back as exactly these bytes.
std::string shell_quote(std::string_view value);

// A script of src/ (embedded by cmake/EmbedScripts.cmake) with each placeholder
// given, an @NAME@ written in the script, replaced by its value. The values are
// not searched for placeholders again. A name given that the script does not
// hold, or an @NAME@ (capitals and '_') left unfilled, is a mistake of tpush's:
// std::logic_error, which any test sending the script reports.
std::string fill_in(std::string_view script,
                    std::initializer_list<std::pair<std::string_view, std::string_view>> values);

// A script file that is one line, without the file's final newline: for a
// place that takes one line (an authorized_keys option, a command's first
// line). At compile time, a file of any other shape does not compile.
constexpr std::string_view one_line(std::string_view script) {
  if (script.empty() || script.find('\n') != script.size() - 1)
    throw std::logic_error("a one-line script must be one line ended by a newline");
  return script.substr(0, script.size() - 1);
}

}  // namespace tpush::util
