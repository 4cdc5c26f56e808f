// Worker output made safe for a terminal. A worker controls the bytes it
// prints; on a terminal, a carriage return, a backspace or an escape sequence
// could move the cursor onto another worker's label and forge a line. So, as
// `cat -v` shows them: control characters as ^X (^M, ^H, ^[), DEL as ^?, bytes
// that are not UTF-8 as M-x, C1 controls (U+0080..U+009F) as M-^X, and the
// bidirectional overrides (U+202A..U+202E, U+2066..U+2069) as <U+202E>. Tabs
// and valid UTF-8 text pass unchanged, and so do colour sequences (SGR,
// "ESC [ 1;31 m"), as `less -R` passes them: they cannot move the cursor, and a
// line that used one ends with a reset so the colour never reaches the next
// label. Pipes and files get the bytes unchanged; so does --raw, and -N.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace tpush::output {

// Appends one line of worker output (no '\n' in it) to `out`, escaped.
void append_for_terminal(std::string& out, std::string_view line);

// A block of lines: each escaped as above, the newlines kept.
std::string for_terminal(std::string_view text);

// Length of the SGR sequence "ESC [ digits;: m" at the start of `s`, or 0.
std::size_t sgr_length(std::string_view s);

// The code point of the well-formed UTF-8 sequence (2 to 4 bytes) at the start
// of `s` and its length, or length 0 when the first byte does not start one.
std::pair<std::uint32_t, std::size_t> decode_utf8(std::string_view s);

}  // namespace tpush::output
