// What the live view (--live) makes of worker text before ncurses draws it
// (output/live/text).
#include <doctest/doctest.h>

#include <string>

#include "tpush/output/live/text.h"

using tpush::output::live_columns;
using tpush::output::live_fit;
using tpush::output::live_safe_text;
using tpush::output::live_visible_part;

TEST_CASE("live text: the visible part of a line is what follows its last carriage return") {
  CHECK(live_visible_part("plain") == "plain");
  CHECK(live_visible_part("10%\r20%\r30%") == "30%");
  CHECK(live_visible_part("done\r") == "done");          // a pty's CRLF, its LF already gone
  CHECK(live_visible_part("50%\r\r") == "50%");
  CHECK(live_visible_part("\r\r") == "");
  CHECK(live_visible_part("") == "");
}

TEST_CASE("live text: control characters are escaped, colours dropped, tabs expanded") {
  CHECK(live_safe_text("w3: forged\bok") == "w3: forged^Hok");
  CHECK(live_safe_text("\033[1A\033[2Kup") == "^[[1A^[[2Kup");  // cursor moves cannot reach ncurses
  CHECK(live_safe_text("\033[1;31mred\033[0m text") == "red text");
  CHECK(live_safe_text("a\tb") == "a       b");
  CHECK(live_safe_text("abcdefgh\tx") == "abcdefgh        x");
  CHECK(live_safe_text("\xff bad") == "M-^? bad");
  CHECK(live_safe_text("caf\xc3\xa9") == "caf\xc3\xa9");
  CHECK(live_safe_text("in\rner") == "in^Mner");
}

TEST_CASE("live text: columns count wide characters twice and combining marks not at all") {
  CHECK(live_columns("abc") == 3);
  CHECK(live_columns("\xe6\x97\xa5\xe6\x9c\xac") == 4);  // 日本
  CHECK(live_columns("e\xcc\x81") == 1);                 // e + combining acute
  CHECK(live_columns("") == 0);
}

TEST_CASE("live text: fitting cuts at whole characters") {
  CHECK(live_fit("abcdef", 0, 3) == "abc");
  CHECK(live_fit("abcdef", 2, 3) == "cde");
  CHECK(live_fit("abc", 5, 3) == "");
  CHECK(live_fit("abc", 0, 0) == "");
  const std::string wide = "\xe6\x97\xa5\xe6\x9c\xac";  // 日本: 2 columns each
  CHECK(live_fit(wide, 0, 3) == "\xe6\x97\xa5");       // the second would need a 4th column
  CHECK(live_fit(wide, 1, 4) == "\xe6\x9c\xac");       // the first is cut by the left edge
  CHECK(live_fit("e\xcc\x81x", 0, 1) == "e\xcc\x81");  // a mark stays with its letter
}
