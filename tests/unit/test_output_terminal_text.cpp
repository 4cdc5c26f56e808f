// Worker output shown on a terminal: nothing a worker prints can move the
// cursor (output/terminal_text).
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <random>
#include <string>

#include "test_support.h"
#include "tpush/output/terminal_text.h"

namespace {

using tpush::output::for_terminal;

std::string shown(std::string_view line) {
  std::string out;
  tpush::output::append_for_terminal(out, line);
  return out;
}

}  // namespace

TEST_CASE("terminal text: control characters as cat -v shows them") {
  CHECK(shown("plain\ttext, 100%") == "plain\ttext, 100%");
  CHECK(shown("w3: forged\rw0: ok") == "w3: forged^Mw0: ok");
  CHECK(shown("abc\b\b\bxyz") == "abc^H^H^Hxyz");
  CHECK(shown("\033[1A\033[2Kup") == "^[[1A^[[2Kup");
  CHECK(shown("\033]0;title\007") == "^[]0;title^G");
  CHECK(shown(std::string("nul\0byte", 8)) == "nul^@byte");
  CHECK(shown("del\x7f") == "del^?");
}

TEST_CASE("terminal text: UTF-8 passes, other high bytes and C1 controls do not") {
  CHECK(shown("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80 \xe4\xb8\xad") == "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x9a\x80 \xe4\xb8\xad");
  CHECK(shown("\x9b" "2J") == "M-^[2J");                  // a lone 8-bit CSI
  CHECK(shown("\xc2\x9b" "2J") == "M-^[2J");              // CSI as UTF-8 (U+009B)
  CHECK(shown("latin1 \xe9t\xe9") == "latin1 M-itM-i");   // not UTF-8
  CHECK(shown("\xed\xa0\x80") == "M-mM- M-^@");           // a surrogate is not UTF-8
  CHECK(shown("\xe0\x80\xaf") == "M-`M-^@M-/");           // nor an overlong form
  CHECK(shown("abc\xe2\x80\xae" "dcba") == "abc<U+202E>dcba");  // right-to-left override
}

TEST_CASE("terminal text: colours pass and are reset at the end of the line") {
  CHECK(shown("\033[1;31mFAILED\033[0m test") == "\033[1;31mFAILED\033[0m test\033[0m");
  CHECK(shown("\033[38:5:208mx") == "\033[38:5:208mx\033[0m");
  CHECK(shown("\033[31") == "^[[31");     // unfinished: not a colour
  CHECK(shown("\033[31;1H") == "^[[31;1H");  // cursor position, not a colour
}

TEST_CASE("terminal text: whatever the bytes, no escape but a colour and no CR or BS reaches the terminal") {
  std::mt19937 rng(11);
  const std::string noise = tpush::test::random_stream(rng, 200000);
  const std::string out = for_terminal(noise);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto c = static_cast<unsigned char>(out[i]);
    if (c == '\n' || c == '\t') continue;
    const bool control = (c < 0x20 && c != 0x1b) || c == 0x7f;
    REQUIRE_FALSE(control);
    if (c == 0x1b) {  // only "ESC [ params m"
      REQUIRE(i + 1 < out.size());
      REQUIRE(out[i + 1] == '[');
      std::size_t j = i + 2;
      while (j < out.size() && (std::isdigit(static_cast<unsigned char>(out[j])) || out[j] == ';' || out[j] == ':')) ++j;
      REQUIRE(j < out.size());
      REQUIRE(out[j] == 'm');
    }
  }
  // Lines stay lines: as many newlines as the input had.
  CHECK(std::count(out.begin(), out.end(), '\n') == std::count(noise.begin(), noise.end(), '\n'));
}
