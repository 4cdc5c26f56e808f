#include "tpush/ssh_config/match.h"

#include "tpush/util/pattern.h"

namespace tpush::ssh_config {

bool host_line_applies(const std::vector<std::string>& patterns, std::string_view host) {
  bool applies = false;
  for (std::string_view pattern : patterns) {
    const bool negated = !pattern.empty() && pattern.front() == '!';
    if (negated) pattern.remove_prefix(1);
    if (!util::pattern_match(host, pattern)) continue;
    if (negated) return false;  // a negated match rules the whole line out
    applies = true;
  }
  return applies;
}

bool match_line_applies(const std::vector<MatchCriterion>& criteria, const MatchSubject& subject) {
  using Type = MatchCriterion::Type;
  for (const MatchCriterion& c : criteria) {
    bool holds = true;
    switch (c.type) {
      case Type::all: holds = true; break;
      case Type::host: holds = util::hostname_list_match(subject.host, c.patterns) == util::PatternListMatch::positive; break;
      case Type::original_host:
        holds = util::hostname_list_match(subject.original_host, c.patterns) == util::PatternListMatch::positive;
        break;
      case Type::user:
        holds = util::pattern_list_match(subject.user, c.patterns, false) == util::PatternListMatch::positive;
        break;
      case Type::local_user:
        holds = util::pattern_list_match(subject.local_user, c.patterns, false) == util::PatternListMatch::positive;
        break;
    }
    if (holds == c.negated) return false;
  }
  return true;
}

}  // namespace tpush::ssh_config
