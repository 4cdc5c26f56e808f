// Worker text as the live view (--live) shows it: ncurses places every cell
// itself, so a line reaches it escaped as terminal_text escapes it (control
// characters as ^X, invalid UTF-8 as M-x) but without colour sequences, with
// tabs expanded, and cut to the columns it has. Pure functions: no terminal.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tpush::output {

// What a terminal would leave visible of one raw line (no '\n' in it) after
// its carriage returns: the last non-empty piece between them, so a progress
// bar shows its latest state and "text\r" (a pty's CRLF) shows "text".
std::string_view live_visible_part(std::string_view line);

// One raw line made safe for the view: SGR colour sequences dropped, the rest
// escaped as append_for_terminal does (an inner '\r' shows as ^M), tabs
// expanded to spaces at every 8th column.
std::string live_safe_text(std::string_view line);

// Columns `text` (valid UTF-8, as live_safe_text makes it) takes on a
// terminal: 2 for East Asian wide characters and emoji, 0 for combining marks.
std::size_t live_columns(std::string_view text);

// The whole characters of `text` that fall in columns [skip, skip + width):
// a wide character cut by either edge is left out.
std::string_view live_fit(std::string_view text, std::size_t skip, std::size_t width);

}  // namespace tpush::output
