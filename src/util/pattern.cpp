#include "tpush/util/pattern.h"

#include <string>

#include "tpush/util/string.h"

namespace tpush::util {

namespace {

constexpr std::size_t kMaxSubpattern = 1023;  // OpenSSH's sub[1024] buffer

}  // namespace

bool pattern_match(std::string_view text, std::string_view pattern) {
  // Greedy scan that backtracks only to the last `*`: equivalent to the
  // recursive definition for patterns made of literals, `?` and `*`.
  std::size_t t = 0, p = 0;
  std::size_t star = std::string_view::npos, star_text = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      star_text = t;
    } else if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++t;
      ++p;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++star_text;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

PatternListMatch pattern_list_match(std::string_view text, std::string_view list,
                                    bool lower_patterns) {
  bool positive = false;
  std::string sub;
  std::size_t i = 0;
  while (i < list.size()) {
    const bool negated = list[i] == '!';
    if (negated) ++i;
    const std::size_t end = std::min(list.find(',', i), list.size());
    if (end - i >= kMaxSubpattern) return PatternListMatch::none;
    sub = lower_patterns ? ascii_lowercase(list.substr(i, end - i)) : std::string(list.substr(i, end - i));
    i = end < list.size() ? end + 1 : end;
    if (pattern_match(text, sub)) {
      if (negated) return PatternListMatch::negated;
      positive = true;
    }
  }
  return positive ? PatternListMatch::positive : PatternListMatch::none;
}

PatternListMatch hostname_list_match(std::string_view host, std::string_view list) {
  return pattern_list_match(ascii_lowercase(host), list, /*lower_patterns=*/true);
}

}  // namespace tpush::util
