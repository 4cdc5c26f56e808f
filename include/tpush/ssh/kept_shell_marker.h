// Finds the marker a kept shell (ssh/kept_shell.h) writes after a command's
// output on each stream: TAG WORD "\n", where TAG holds a nonce drawn for the
// command and WORD says how it ended. The marker follows the output directly,
// at the start of a line or not, so output that did not end with a newline
// comes out unchanged; and since the tag does not start with a newline, no
// complete line is ever held back waiting to see whether a marker follows.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace tpush::ssh {

class KeptShellMarker {
 public:
  // A word is at most `max_word` bytes: a longer line after the tag is output.
  explicit KeptShellMarker(std::string tag, std::size_t max_word = 24);

  // The bytes of `chunk` that come before the marker line. Bytes that could
  // still be the start of it are held back until they show what they are;
  // once the line is complete, what follows it is left in rest().
  std::string feed(std::string_view chunk);
  // The marker's word, once its line is complete.
  const std::optional<std::string>& word() const { return word_; }
  // Bytes after the marker line (a process the command left behind).
  std::string take_rest() { return std::exchange(rest_, {}); }
  // What is held back, when the stream ended without the marker.
  std::string flush();

 private:
  std::string needle_;  // the tag
  std::size_t max_word_;
  std::string held_;    // a possible start of the needle, or the word so far
  bool in_word_ = false;
  std::optional<std::string> word_;
  std::string rest_;
};

}  // namespace tpush::ssh
