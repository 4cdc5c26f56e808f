// SudoPassword: asked once and only when a worker asks, checked on that worker
// before any other gets it, never tried again once refused.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "tpush/fanout/sudo_password.h"

using tpush::fanout::SudoPassword;
using Kind = SudoPassword::Answer::Kind;

namespace {

struct Asker {
  std::optional<std::string> answer = "s3cret";
  int asked = 0;
  std::string prompt;
  SudoPassword::Ask fn() {
    return [this](const std::string& p) {
      ++asked;
      prompt = p;
      return answer;
    };
  }
};

SudoPassword make(Asker& a, bool can_ask = true) {
  return SudoPassword({"u@w0", "u@w1", "u@w2"}, can_ask, a.fn(), "[p] ", "m");
}

}  // namespace

TEST_CASE("asked once, when the first worker asks, and the others wait until sudo ran there") {
  Asker a;
  SudoPassword p = make(a);
  CHECK(a.asked == 0);  // nobody asked yet: no prompt
  const auto first = p.asked(1);
  CHECK(first.kind == Kind::send);
  CHECK(first.password == "s3cret\n");
  CHECK(a.asked == 1);
  CHECK(a.prompt.find("u@w1") != std::string::npos);
  CHECK(p.asked(0).kind == Kind::wait);
  CHECK(p.asked(2).kind == Kind::wait);
  p.ran(1);
  CHECK(p.asked(0).kind == Kind::send);
  CHECK(p.asked(2).password == "s3cret\n");
  CHECK(a.asked == 1);
}

TEST_CASE("a refused password is never sent again, and every worker that asks says why") {
  Asker a;
  SudoPassword p = make(a);
  REQUIRE(p.asked(0).kind == Kind::send);
  CHECK(p.asked(2).kind == Kind::wait);
  CHECK(p.refused(0) == "sudo refused the password (wrong; not tried again)");
  const auto later = p.asked(2);
  CHECK(later.kind == Kind::give_up);
  CHECK(later.password.empty());
  CHECK(later.reason == "sudo refused the password on u@w0 (tpush asks once and never tries it again)");
  CHECK(a.asked == 1);
}

TEST_CASE("sudo ending on the checking worker without running the command keeps it from the others") {
  Asker a;
  SudoPassword p = make(a);
  REQUIRE(p.asked(0).kind == Kind::send);
  p.ended(0);  // e.g. "u is not in the sudoers file"
  const auto other = p.asked(1);
  CHECK(other.kind == Kind::give_up);
  CHECK(other.reason.find("did not run the command after the password") != std::string::npos);
}

TEST_CASE("a worker that refuses the password another worker took gives up alone") {
  Asker a;
  SudoPassword p = make(a);
  REQUIRE(p.asked(0).kind == Kind::send);
  p.ran(0);
  REQUIRE(p.asked(1).kind == Kind::send);
  CHECK(p.refused(1) == "sudo refused the password that u@w0 took (not tried again)");
  CHECK(p.asked(2).kind == Kind::send);  // still good where it is
}

TEST_CASE("no terminal, or nothing typed: nothing is sent, and the reason says what to do") {
  Asker a;
  SudoPassword none = make(a, false);
  const auto answer = none.asked(0);
  CHECK(answer.kind == Kind::give_up);
  CHECK(answer.reason.find("no terminal to ask on") != std::string::npos);
  CHECK(answer.reason.find("NOPASSWD") != std::string::npos);
  CHECK(a.asked == 0);

  Asker empty;
  empty.answer = "";
  SudoPassword p = make(empty);
  CHECK(p.asked(0).kind == Kind::give_up);
  CHECK(p.asked(1).kind == Kind::give_up);
  CHECK(empty.asked == 1);
}
