#include "tpush/inventory/host_filter.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "tpush/inventory/host_pattern.h"

namespace tpush::inventory {
namespace {

using std::string_view;

// regcomp() parses a group by recursing into it: thousands of nested groups
// overflowed the stack. Real filters nest a few.
constexpr int kMaxFilterNesting = 64;

// glibc's regcomp() writes out every repeat: e+ becomes e e*, e{1,9} nine e's,
// and a repeat of a repeat multiplies, so /e++++++++++++++++++++/ took 0.7 GB and
// forty +'s took all 24 GB of a machine. Filters of real host names come to tens.
constexpr double kMaxFilterSize = 20000;

// The digits `text` (at most 9 of them count: more is no filter anyone writes).
double number(string_view text) {
  double n = 0;
  for (char d : text.substr(0, 9)) n = n * 10 + (d - '0');
  return n;
}

// Where the bracket expression that opens at `open` ends: its ']' (a ']' first,
// after an optional '^', is a member; so is a [:class:]), or the text's end.
std::size_t bracket_end(string_view text, std::size_t open) {
  std::size_t j = open + 1;
  if (j < text.size() && text[j] == '^') ++j;
  if (j < text.size() && text[j] == ']') ++j;
  while (j < text.size() && text[j] != ']') {
    const std::size_t class_end = text.compare(j, 2, "[:") == 0 ? text.find(":]", j + 2) : string_view::npos;
    j = class_end == string_view::npos ? j + 1 : class_end + 2;
  }
  return j;
}

// How many copies of its atoms regcomp() would make of the ERE `text`, roughly
// (an upper bound for the forms that grow: +, {m,n} and their nesting).
double filter_size(string_view text) {
  std::vector<double> groups{0};  // each open group's size so far, the whole expression first
  double last = 0;                // the size of the atom or group a repeat would apply to
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '(') {
      groups.push_back(0);
      last = 0;
      continue;
    }
    if (c == ')' && groups.size() > 1) {
      last = groups.back();
      groups.pop_back();
      groups.back() += last;
      continue;
    }
    double times = 0;  // a repeat's factor, or 0 for an atom
    if (c == '+') times = 2;
    if (c == '*' || c == '?') times = 1;
    if (c == '{') {
      const std::size_t close = text.find('}', i);
      const string_view bound = close == string_view::npos ? string_view() : text.substr(i + 1, close - i - 1);
      if (!bound.empty() && bound.find_first_not_of("0123456789,") == string_view::npos) {
        const std::size_t comma = bound.find(',');
        const string_view most = comma == string_view::npos ? bound : bound.substr(comma + 1);
        // {m,n} makes n copies; {m,} m and a star.
        times = most.empty() ? number(bound.substr(0, comma)) + 1 : number(most);
        times = std::max(times, 1.0);
        i = close;
      }
    }
    if (times > 0) {
      if (times > 1) groups.back() += last * (times - 1);  // never inf * 0
      last *= times;
      continue;
    }
    // An atom: a character, an escaped one, '.', an anchor, or a bracket expression.
    if (c == '\\') ++i;
    if (c == '[') i = bracket_end(text, i);
    last = c == '|' ? 0 : 1;
    groups.back() += last;
  }
  double total = 0;
  for (double g : groups) total += g;
  return total;
}

}  // namespace

bool HostFilter::matches(const std::string& name) const {
  regmatch_t whole{0, static_cast<regoff_t>(name.size())};  // REG_STARTEND: NULs are bytes too
  return ::regexec(re.get(), name.c_str(), 0, &whole, REG_STARTEND) == 0;
}

HostFilter parse_host_filter(string_view token, bool drop) {
  if (token.size() < 2 || token.back() != '/') {
    fail_host_list(token, "the filter " + quote_for_message(token) +
                    " must end with '/': a filter runs to the next comma or blank (write /REGEX/, "
                    "like /^node1/)");
  }
  const string_view text = token.substr(1, token.size() - 2);
  if (text.empty()) fail_host_list(token, "empty filter (write /REGEX/, like /^node1/)");
  int depth = 0, deepest = 0;  // counts '(' in brackets too: an upper bound
  for (char c : text) {
    if (c == '(') deepest = std::max(deepest, ++depth);
    if (c == ')' && depth > 0) --depth;
  }
  if (deepest > kMaxFilterNesting) {
    fail_host_list(token, "bad regular expression " + quote_for_message(text) + ": groups nested more than " +
                    std::to_string(kMaxFilterNesting) + " deep");
  }
  if (!(filter_size(text) <= kMaxFilterSize)) {  // inf and NaN too
    fail_host_list(token, "bad regular expression " + quote_for_message(text) +
                    ": its repeats would make over " + std::to_string(static_cast<int>(kMaxFilterSize)) +
                    " copies (no repeat of a repeat like e++, smaller {m,n})");
  }
  if (text.find('\0') != string_view::npos) fail_host_list(token, "a NUL byte in the filter " + quote_for_message(text));
  auto re = std::make_unique<regex_t>();
  if (const int rc = ::regcomp(re.get(), std::string(text).c_str(), REG_EXTENDED | REG_NOSUB); rc != 0) {
    char why[256];
    ::regerror(rc, re.get(), why, sizeof why);
    fail_host_list(token, "bad regular expression " + quote_for_message(text) + ": " + why);
  }
  return HostFilter{std::shared_ptr<regex_t>(re.release(),
                                             [](regex_t* r) {
                                               ::regfree(r);
                                               delete r;
                                             }),
                    drop};
}

}  // namespace tpush::inventory
