#include "tpush/inventory/host_filter.h"

#include <algorithm>
#include <memory>
#include <string>

#include "tpush/inventory/host_pattern.h"

namespace tpush::inventory {
namespace {

using std::string_view;

// regcomp() parses a group by recursing into it: thousands of nested groups
// overflowed the stack. Real filters nest a few.
constexpr int kMaxFilterNesting = 64;

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
