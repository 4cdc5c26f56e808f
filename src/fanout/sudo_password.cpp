#include "tpush/fanout/sudo_password.h"

#include <openssl/crypto.h>

#include <utility>

namespace tpush::fanout {

SudoPassword::SudoPassword(std::vector<std::string> who, bool can_ask, Ask ask, std::string prompt, std::string mark)
    : who_(std::move(who)), can_ask_(can_ask), ask_(std::move(ask)), prompt_(std::move(prompt)), mark_(std::move(mark)) {}

SudoPassword::~SudoPassword() { forget(); }

void SudoPassword::forget() {
  OPENSSL_cleanse(password_.data(), password_.size());
  password_.clear();
}

SudoPassword::Answer SudoPassword::asked(std::size_t worker) {
  using K = Answer::Kind;
  switch (state_) {
    case State::unknown: {
      std::optional<std::string> given;
      if (can_ask_) given = ask_("[tpush] sudo password for " + who_[worker] + " (asked once, for every worker): ");
      if (!given || given->empty()) {
        if (given) OPENSSL_cleanse(given->data(), given->size());
        state_ = State::bad;
        bad_reason_ = can_ask_ ? "sudo asked for a password and none was given"
                               : "sudo asks for a password here and tpush has no terminal to ask on (run tpush at "
                                 "a terminal, or give the user NOPASSWD in sudoers)";
        return {K::give_up, {}, bad_reason_};
      }
      password_.reserve(given->size() + 1);  // one buffer, wiped at the end
      password_ = *given;
      password_ += '\n';  // the line sudo reads
      OPENSSL_cleanse(given->data(), given->size());
      state_ = State::checking;
      checker_ = worker;
      return {K::send, password_, {}};
    }
    case State::checking: return {K::wait, {}, {}};  // until the checker's sudo says
    case State::good: return {K::send, password_, {}};
    case State::bad: return {K::give_up, {}, bad_reason_};
  }
  return {K::give_up, {}, bad_reason_};
}

void SudoPassword::ran(std::size_t worker) {
  if (state_ == State::checking && worker == checker_) state_ = State::good;
}

std::string SudoPassword::refused(std::size_t worker) {
  if (state_ == State::checking && worker == checker_) {
    state_ = State::bad;
    forget();
    bad_reason_ = "sudo refused the password on " + who_[checker_] + " (tpush asks once and never tries it again)";
    return "sudo refused the password (wrong; not tried again)";
  }
  return "sudo refused the password that " + who_[checker_] + " took (not tried again)";
}

void SudoPassword::ended(std::size_t worker) {
  if (state_ != State::checking || worker != checker_) return;
  state_ = State::bad;
  forget();
  bad_reason_ = "sudo on " + who_[checker_] + " did not run the command after the password (see its output), " +
                "so the password was not sent here";
}

}  // namespace tpush::fanout
