// Whether a Host or Match line applies to a host, as OpenSSH 9.2 decides
// (readconf.c: the Host case and match_cfg_line). A building block of
// config.h.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tpush/ssh_config/parse.h"

namespace tpush::ssh_config {

// A Host line: some pattern matches `host` (as written on the command line,
// case-sensitive) and no `!pattern` does. No patterns: never.
bool host_line_applies(const std::vector<std::string>& patterns, std::string_view host);

// What Match criteria look at, at the point the line is read.
struct MatchSubject {
  std::string_view host;           // HostName obtained so far with %h expanded, else the host
  std::string_view original_host;  // the host as written
  std::string_view user;           // User obtained so far (or given), else the local user
  std::string_view local_user;
};

// Every criterion holds (a negated one must not).
bool match_line_applies(const std::vector<MatchCriterion>& criteria, const MatchSubject& subject);

}  // namespace tpush::ssh_config
