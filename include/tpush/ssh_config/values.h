// The values of ssh_config keywords: checked as OpenSSH 9.2 checks them when
// it reads a line (in every block, applying or not), and converted for the
// keywords tpush resolves. A building block of config.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tpush/ssh_config/jump.h"
#include "tpush/ssh_config/keywords.h"
#include "tpush/ssh_config/line.h"

namespace tpush::ssh_config {

// StrictHostKeyChecking, numbered as OpenSSH numbers it.
enum class StrictHostKeyChecking : uint8_t { no, accept_new, yes, ask };
enum class AddressFamily : uint8_t { any, inet, inet6 };

struct ConfigValue {
  std::string text;  // HostName, User, IdentityFile, ..., ProxyCommand (the rest of the line)
  // Flags as 1/0; StrictHostKeyChecking, AddressFamily, CanonicalizeHostname
  // (0 = no) as their number; integers; times in seconds (-1 for `none`,
  // which leaves the value unset); ports.
  int number = 0;
  std::vector<std::string> list;  // UserKnownHostsFile, GlobalKnownHostsFile
  ProxyJumpValue jump;            // ProxyJump
};

// Checks a line's value for its keyword (not Host, Match or Include).
// Returns "" or what is wrong and how to fix it, e.g.
// `Port: "0" is not a port; use a number from 1 to 65535 or a service name`.
std::string check_value(const KeywordInfo& keyword, const ConfigLine& line, ConfigValue& out);

// OpenSSH's time format: seconds, or numbers with s, m, h, d, w (any case)
// such as 1h30m. -1 when invalid.
int parse_config_time(std::string_view text);

}  // namespace tpush::ssh_config
