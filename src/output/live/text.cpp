#include "tpush/output/live/text.h"

#include <cstdint>
#include <utility>

#include "tpush/output/terminal_text.h"

namespace tpush::output {
namespace {

// The code point at the start of `s` (live_safe_text's output: valid UTF-8) and
// its length in bytes.
std::pair<std::uint32_t, std::size_t> live_next_char(std::string_view s) {
  const auto lead = static_cast<unsigned char>(s[0]);
  if (lead < 0x80) return {lead, 1};
  const auto [cp, n] = decode_utf8(s);
  return n ? std::pair{cp, n} : std::pair<std::uint32_t, std::size_t>{'?', 1};
}

struct LiveRange {
  std::uint32_t first, last;
};

constexpr LiveRange kLiveZeroWidth[] = {
    {0x0300, 0x036f}, {0x0483, 0x0489}, {0x0591, 0x05bd}, {0x0610, 0x061a}, {0x064b, 0x065f},
    {0x1ab0, 0x1aff}, {0x1dc0, 0x1dff}, {0x200b, 0x200f}, {0x20d0, 0x20ff}, {0xfe00, 0xfe0f},
    {0xfe20, 0xfe2f},
};

constexpr LiveRange kLiveWide[] = {
    {0x1100, 0x115f},   {0x2e80, 0x303e},   {0x3041, 0x33ff},   {0x3400, 0x4dbf}, {0x4e00, 0x9fff},
    {0xa000, 0xa4cf},   {0xac00, 0xd7a3},   {0xf900, 0xfaff},   {0xfe30, 0xfe4f}, {0xff00, 0xff60},
    {0xffe0, 0xffe6},   {0x1f300, 0x1f64f}, {0x1f900, 0x1f9ff}, {0x20000, 0x3fffd},
};

bool live_in(const LiveRange* begin, const LiveRange* end, std::uint32_t cp) {
  for (const LiveRange* r = begin; r != end; ++r)
    if (cp >= r->first && cp <= r->last) return true;
  return false;
}

std::size_t live_char_columns(std::uint32_t cp) {
  if (cp < 0x300) return 1;
  if (live_in(std::begin(kLiveZeroWidth), std::end(kLiveZeroWidth), cp)) return 0;
  if (live_in(std::begin(kLiveWide), std::end(kLiveWide), cp)) return 2;
  return 1;
}

}  // namespace

std::string_view live_visible_part(std::string_view line) {
  while (!line.empty()) {
    const std::size_t cr = line.rfind('\r');
    if (cr == std::string_view::npos) return line;
    if (cr + 1 < line.size()) return line.substr(cr + 1);
    line.remove_suffix(1);  // a trailing CR: the text before it stays visible
  }
  return line;
}

std::string live_safe_text(std::string_view line) {
  std::string plain;  // without colour: ncurses sets every cell's attributes itself
  plain.reserve(line.size());
  for (std::size_t i = 0; i < line.size();) {
    const std::size_t esc = line.find('\033', i);
    plain.append(line, i, esc == std::string_view::npos ? std::string_view::npos : esc - i);
    if (esc == std::string_view::npos) break;
    const std::size_t n = sgr_length(line.substr(esc));
    if (n == 0) plain += '\033';  // escaped below, as ^[
    i = esc + (n == 0 ? 1 : n);
  }
  std::string escaped;
  escaped.reserve(plain.size());
  append_for_terminal(escaped, plain);
  if (escaped.find('\t') == std::string::npos) return escaped;
  std::string out;
  std::size_t column = 0;
  for (std::size_t i = 0; i < escaped.size();) {
    if (escaped[i] == '\t') {
      const std::size_t to = (column / 8 + 1) * 8;
      out.append(to - column, ' ');
      column = to;
      ++i;
      continue;
    }
    const auto [cp, n] = live_next_char(std::string_view(escaped).substr(i));
    out.append(escaped, i, n);
    column += live_char_columns(cp);
    i += n;
  }
  return out;
}

std::size_t live_columns(std::string_view text) {
  std::size_t columns = 0;
  for (std::size_t i = 0; i < text.size();) {
    const auto [cp, n] = live_next_char(text.substr(i));
    columns += live_char_columns(cp);
    i += n;
  }
  return columns;
}

std::string_view live_fit(std::string_view text, std::size_t skip, std::size_t width) {
  std::size_t column = 0, i = 0;
  // Past the skipped columns, a wide character they cut, and marks combining with them.
  while (i < text.size()) {
    const auto [cp, n] = live_next_char(text.substr(i));
    const std::size_t w = live_char_columns(cp);
    if (column >= skip && w > 0) break;
    column += w;
    i += n;
  }
  const std::size_t begin = i;
  const std::size_t limit = skip + width;
  while (i < text.size()) {
    const auto [cp, n] = live_next_char(text.substr(i));
    const std::size_t w = live_char_columns(cp);
    if (column + w > limit) break;
    column += w;
    i += n;
  }
  return text.substr(begin, i - begin);
}

}  // namespace tpush::output
