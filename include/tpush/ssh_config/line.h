// One ssh_config line split into keyword and arguments the way OpenSSH 9.2
// splits it (readconf.c with misc.c's strdelim and argv_split). A building
// block of config.h.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tpush::ssh_config {

struct ConfigLine {
  // Lowercased keyword; empty for a blank or comment line (nothing else set).
  std::string keyword;
  // Everything after the keyword and its separator (blanks, or one `=` with
  // blanks around it), trailing blanks removed. ProxyCommand, ProxyJump,
  // LocalCommand, ... take this text as it is: quotes and `#` included.
  std::string rest;
  // `rest` split into arguments: blanks separate; "double" and 'single'
  // quotes group (and are removed); a backslash escapes a quote, a backslash
  // and, outside quotes, a blank; an argument starting with `#` ends the line.
  std::vector<std::string> args;
};

// Splits `line`. Returns "" on success or what is wrong: `no argument after
// keyword "port"` or `unbalanced quotes`; `keyword` is set in both cases.
std::string split_config_line(std::string_view line, ConfigLine& out);

// The words of a Match line, as OpenSSH reads them (strdelim): separated by
// blanks or one `=`, and a "double-quoted" word may hold blanks. Returns
// the next word, "" when a word is empty (e.g. `""`), or nullopt at the end.
// Sets `unbalanced` on an unterminated quote (and returns nullopt).
class MatchWords {
 public:
  explicit MatchWords(std::string_view text) : text_(text) {}
  std::optional<std::string> next(bool& unbalanced);
  // What is left after the last word taken: nullopt when all was used.
  std::optional<std::string_view> rest() const;
  // Marks everything consumed (a comment ends the line).
  void finish() { done_ = true; }

 private:
  std::string text_;
  std::size_t pos_ = 0;
  bool done_ = false;
};

}  // namespace tpush::ssh_config
