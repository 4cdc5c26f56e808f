#include "tpush/output/terminal_text.h"

#include <cstdint>
#include <cstdio>

namespace tpush::output {
namespace {

constexpr char kEsc = '\033';
constexpr std::string_view kSgrReset = "\033[0m";

// cat -v's notation for one byte that is not shown as itself.
void append_caret(std::string& out, unsigned char c) {
  if (c >= 0x80) {
    out += "M-";
    c = static_cast<unsigned char>(c - 0x80);
  }
  if (c < 0x20) {
    out += '^';
    out += static_cast<char>(c + 0x40);
  } else if (c == 0x7f) {
    out += "^?";
  } else {
    out += static_cast<char>(c);
  }
}

bool is_bidi_control(std::uint32_t cp) {
  return (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

}  // namespace

std::size_t sgr_length(std::string_view s) {
  if (s.size() < 3 || s[0] != kEsc || s[1] != '[') return 0;
  for (std::size_t i = 2; i < s.size() && i < 64; ++i) {
    const char c = s[i];
    if (c == 'm') return i + 1;
    if (!((c >= '0' && c <= '9') || c == ';' || c == ':')) return 0;
  }
  return 0;
}

std::pair<std::uint32_t, std::size_t> decode_utf8(std::string_view s) {
  const auto b = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char lead = b(0);
  std::size_t n = 0;
  std::uint32_t cp = 0, min = 0;
  if (lead >= 0xc2 && lead <= 0xdf) n = 2, cp = lead & 0x1f, min = 0x80;
  else if (lead >= 0xe0 && lead <= 0xef) n = 3, cp = lead & 0x0f, min = 0x800;
  else if (lead >= 0xf0 && lead <= 0xf4) n = 4, cp = lead & 0x07, min = 0x10000;
  else return {0, 0};
  if (s.size() < n) return {0, 0};
  for (std::size_t i = 1; i < n; ++i) {
    if ((b(i) & 0xc0) != 0x80) return {0, 0};
    cp = (cp << 6) | (b(i) & 0x3f);
  }
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return {0, 0};
  return {cp, n};
}

void append_for_terminal(std::string& out, std::string_view line) {
  bool coloured = false;
  std::size_t i = 0;
  while (i < line.size()) {
    // Runs of plain printable ASCII (and tabs) go in one append.
    std::size_t j = i;
    while (j < line.size()) {
      const auto c = static_cast<unsigned char>(line[j]);
      if ((c < 0x20 && c != '\t') || c >= 0x7f) break;
      ++j;
    }
    out.append(line, i, j - i);
    if (j == line.size()) break;
    i = j;
    const auto c = static_cast<unsigned char>(line[i]);
    if (c < 0x80) {
      if (const std::size_t n = sgr_length(line.substr(i))) {
        out.append(line, i, n);
        coloured = true;
        i += n;
      } else {
        append_caret(out, c);
        ++i;
      }
      continue;
    }
    const auto [cp, n] = decode_utf8(line.substr(i));
    if (n == 0) {  // not UTF-8
      append_caret(out, c);
      ++i;
    } else if (cp < 0xa0) {  // a C1 control: 8-bit CSI and its kind
      append_caret(out, static_cast<unsigned char>(cp));
      i += n;
    } else if (is_bidi_control(cp)) {
      char name[16];
      std::snprintf(name, sizeof name, "<U+%04X>", static_cast<unsigned>(cp));
      out += name;
      i += n;
    } else {
      out.append(line, i, n);
      i += n;
    }
  }
  if (coloured) out += kSgrReset;
}

std::string for_terminal(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    append_for_terminal(out, text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    out += '\n';
    text.remove_prefix(nl + 1);
  }
  return out;
}

}  // namespace tpush::output
