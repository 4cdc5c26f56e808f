// The one sudo password of a --sudo run: asked on the terminal when the first
// worker's sudo asks for it (never when none does), sent to that worker alone
// until sudo there lets the command run, then to every worker that asks. A
// wrong one is never tried again, anywhere: the workers that ask get EOF
// instead, and say why. The password lives here and in the channel that sends
// it, and nowhere else (no log, no output, no file); it is wiped at the end.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tpush::fanout {

class SudoPassword {
 public:
  // Asks for the password (showing `prompt`); nullopt when it cannot (no
  // terminal) or none was given.
  using Ask = std::function<std::optional<std::string>(const std::string& prompt)>;

  // `who[i]`: "alice@w3", worker i's login, for the prompt and the messages.
  // `can_ask`: there is a terminal to ask on. `prompt` and `mark`: the run's
  // own, unguessable, as its workers' commands give them to sudo and the
  // root shell (SudoExchange).
  SudoPassword(std::vector<std::string> who, bool can_ask, Ask ask, std::string prompt, std::string mark);
  ~SudoPassword();
  SudoPassword(const SudoPassword&) = delete;
  SudoPassword& operator=(const SudoPassword&) = delete;

  // What worker `worker`, whose sudo asks for the password, does now.
  struct Answer {
    enum class Kind { send, wait, give_up } kind;
    std::string password;  // send: the password's line, "...\n" (to write, then wipe)
    std::string reason;    // give_up: why, for the worker's summary line
  };
  Answer asked(std::size_t worker);
  // Sudo let the command run on `worker` (after the password, or without one).
  void ran(std::size_t worker);
  // Sudo asked `worker` again after its password: wrong there. The reason.
  std::string refused(std::size_t worker);
  // `worker`'s command ended, sudo never having let it run.
  void ended(std::size_t worker);

  const std::string& prompt() const { return prompt_; }
  const std::string& mark() const { return mark_; }

 private:
  enum class State { unknown, checking, good, bad };
  void forget();

  std::vector<std::string> who_;
  bool can_ask_;
  Ask ask_;
  State state_ = State::unknown;
  std::size_t checker_ = 0;  // the worker it is checked on (checking, good, bad)
  std::string password_;
  std::string bad_reason_;
  std::string prompt_, mark_;
};

}  // namespace tpush::fanout
