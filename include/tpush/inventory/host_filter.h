// pdsh's filters in a host list: /REGEX/ keeps the hosts whose name matches,
// -/REGEX/ drops them. A POSIX extended regular expression, by the C library's
// regcomp() as in pdsh. (std::regex matched with one stack frame per character
// of the name: a long name overflowed the stack.)
#pragma once

#include <regex.h>

#include <memory>
#include <string>
#include <string_view>

namespace tpush::inventory {

struct HostFilter {
  std::shared_ptr<regex_t> re;
  bool drop = false;  // -/REGEX/

  // Whether the expression matches in `name` (NUL bytes included).
  bool matches(const std::string& name) const;
};

// The filter `token` writes (/REGEX/, the slashes included); a malformed one is a
// UsageError quoting it.
HostFilter parse_host_filter(std::string_view token, bool drop);

}  // namespace tpush::inventory
