// OpenSSH's wildcard patterns and pattern lists (its match.c): ssh_config uses
// them for Host, Match and IgnoreUnknown, known_hosts for its host patterns,
// host lists for wildcards over the group `all`.
#pragma once

#include <string_view>

namespace tpush::util {

// `*` matches any run of characters (also none), `?` exactly one; every
// other character only itself, case-sensitively. The whole string must match.
bool pattern_match(std::string_view text, std::string_view pattern);

enum class PatternListMatch { none, positive, negated };

// A comma-separated list of patterns, each optionally prefixed with `!`.
// A negated pattern that matches wins over everything (`negated`); otherwise
// any positive match gives `positive`. With `lower_patterns` the patterns are
// lowercased first (the text is used as given). As in OpenSSH, a list with a
// pattern of 1023 characters or more never matches.
PatternListMatch pattern_list_match(std::string_view text, std::string_view list,
                                    bool lower_patterns);

// OpenSSH's match_hostname: lowercases `host` and the patterns, then
// pattern_list_match().
PatternListMatch hostname_list_match(std::string_view host, std::string_view list);

}  // namespace tpush::util
