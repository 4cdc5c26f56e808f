// What sudo says on a worker before the command starts, read out of the stream
// it says it on (stderr; the terminal's stream with --tty): tpush's own
// prompt (`sudo -S -p PROMPT`), each time sudo asks, and the mark the root
// shell prints once sudo let it run. Both are taken out; everything else
// (sudo's lecture, "Sorry, try again.", its errors) passes on as it came.
// After the mark the stream is the command's, untouched.
#pragma once

#include <string>
#include <string_view>

namespace tpush::fanout {

class SudoExchange {
 public:
  SudoExchange(std::string prompt, std::string mark);

  struct Seen {
    std::string out;  // what passes on
    int prompts = 0;  // times sudo asked, in these bytes
    bool ran = false;  // the mark came: sudo let the command run
  };
  Seen take(std::string_view bytes);
  bool ran() const { return ran_; }
  // The bytes held as the possible start of the prompt or the mark, at the end.
  std::string flush();

 private:
  // How much of the end of held_ could still grow into the prompt or the mark line.
  std::size_t open_tail() const;

  std::string prompt_, mark_;
  std::string held_;
  bool after_prompt_ = false;  // the newline sudo writes after a prompt is dropped
  bool ran_ = false;
};

}  // namespace tpush::fanout
