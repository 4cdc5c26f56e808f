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

#include <string>
#include <string_view>

namespace tpush::output {

// Appends one line of worker output (no '\n' in it) to `out`, escaped.
void append_for_terminal(std::string& out, std::string_view line);

// A block of lines: each escaped as above, the newlines kept.
std::string for_terminal(std::string_view text);

}  // namespace tpush::output
