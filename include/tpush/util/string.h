// Small string helpers every layer uses: trimming, joining, splitting, ASCII case,
// edit distance for "did you mean" hints, escaping for messages.
#pragma once

#include <chrono>
#include <optional>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tpush::util {

// `s` without leading and trailing blanks (space, tab, CR, LF, VT, FF).
std::string_view trim(std::string_view s);
// `s` without the leading and trailing characters that are in `blanks`.
std::string_view trim(std::string_view s, std::string_view blanks);
// trim(), as a string of its own.
inline std::string trimmed(std::string_view s) { return std::string(trim(s)); }

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The items with `separator` between them: join({"a", "b"}, ", ") == "a, b".
std::string join(const std::vector<std::string>& items, std::string_view separator);

// `s` cut at every `separator`; empty pieces are kept ("a,,b" gives 3 items,
// "" gives one empty item).
std::vector<std::string> split(std::string_view s, char separator);

std::string ascii_lowercase(std::string_view s);

// Equal when compared without regard to ASCII case.
bool iequals(std::string_view a, std::string_view b);

// A duration as people write one: "90", "90s", "10m", "2h", "1d"; "0", "no"
// and "off" are zero. Nullopt when it is not one, or over a year.
std::optional<std::chrono::seconds> parse_duration(std::string_view text);

// "12s": whole seconds as messages write them.
inline std::string seconds_text(std::chrono::seconds s) { return std::to_string(s.count()) + "s"; }

// Levenshtein distance, for "did you mean" hints.
std::size_t edit_distance(std::string_view a, std::string_view b);

// The length of the UTF-8 character that starts at `s[i]` (1 for ASCII), or 0
// when the bytes there are not one (a stray or cut-short byte, an overlong
// form, a surrogate, past U+10FFFF).
std::size_t utf8_length(std::string_view s, std::size_t i);
// True when `s` is valid UTF-8 throughout.
bool is_utf8(std::string_view s);
// The length of the character at `s[i]` when it is not printable text: a
// control character (C0, DEL, C1), a byte-order mark (U+FEFF), or a byte that
// is not UTF-8 (length 1); 0 when it prints.
std::size_t unprintable_length(std::string_view s, std::size_t i);

// `text` with its control characters shown as C escapes (\n, \t, \x1b), so a
// message quoting user input stays one line and cannot drive the terminal.
std::string printable(std::string_view text);

}  // namespace tpush::util
