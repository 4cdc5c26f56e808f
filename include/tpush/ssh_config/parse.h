// Reading ssh_config once: the -o lines and every file, with each Include
// expanded in place, become one list of directives that resolving a host
// walks. A building block of config.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tpush/ssh_config/config.h"
#include "tpush/ssh_config/keywords.h"
#include "tpush/ssh_config/values.h"

namespace tpush::ssh_config {

struct MatchCriterion {
  enum class Type : uint8_t { all, host, original_host, user, local_user };
  Type type = Type::all;
  bool negated = false;
  std::string patterns;  // comma list
};

struct ConfigDirective {
  enum class Kind : uint8_t {
    file_start,     // the -o lines or a top-level file begin: lines apply again
    include_start,  // an included file begins (from an inactive block: nothing in it applies)
    include_end,    // it ends: the including block's state comes back
    host,           // Host `patterns`
    match,          // Match `criteria`; `never` when it uses what tpush does not support
    set,            // a keyword tpush resolves: `key`, `value`
    unknown,        // an unknown keyword that an IgnoreUnknown may cover: `value.text`
  };
  Kind kind = Kind::set;
  ConfigKey key = ConfigKey::other;
  bool user_scope = true;  // from -o, -F or a user file (OpenSSH's "user provided")
  bool never = false;
  uint32_t source = 0;     // index in ParsedConfig::sources
  int line = 0;
  ConfigValue value;
  std::vector<std::string> patterns;
  std::vector<MatchCriterion> criteria;
};

struct ParsedConfig {
  std::vector<ConfigDirective> directives;
  // Names for origins and messages: [0] is "-o", then files as shown
  // (under home as "~/...").
  std::vector<std::string> sources;
  std::vector<std::string> errors, warnings;
};

ParsedConfig parse_ssh_config(const SshConfigSources& sources);

// "~/.ssh/config" for a path under `home`, else the path.
std::string display_path(const std::string& path, const std::string& home);

}  // namespace tpush::ssh_config
