// tpush's own configuration file: defaults for the options people give on every
// run, and host groups.
//
//   # ~/.config/tpush/config
//   user = alice
//   identity = ~/.ssh/google_compute_engine     (repeatable)
//   fanout = 256
//   zone = us-central2-b
//
//   [groups]
//   gpu = node[01-16]
//   pods = tpu:pod-a,tpu:pod-b                  (a TPU stands for all its workers)
//
// Found at --config FILE, else $TPUSH_CONFIG, else $XDG_CONFIG_HOME/tpush/config
// (~/.config/tpush/config); `none` reads no file. Keys are the long option names.
// A value acts as the option given on every command line, and the command line
// wins; the keys that say how a worker is reached (user, port, identity, jump,
// connect-timeout, alive-interval, host-key-check) rank lower: below the host
// list's user@ and :port and ssh_config too, above tpush's own defaults.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "tpush/commands/cli/options.h"
#include "tpush/inventory/host_groups.h"

namespace tpush::commands {

struct ConfigEntry {
  std::string key;
  std::string value;
  int line = 0;
};

struct ConfigFile {
  std::filesystem::path file;  // empty: no file
  std::string found_by;        // "--config", "TPUSH_CONFIG", "the default location"
  std::vector<ConfigEntry> settings;
  std::vector<ConfigEntry> groups;  // key: the group's name; value: its hosts

  // "FILE:LINE", for messages and origins.
  std::string where(int line) const;
};

// Parses a config file's text; `file` names it in messages. Anything malformed,
// an unknown section or key (with "did you mean" where one is close) and a key
// that is not an option people repeat is a UsageError "FILE:LINE: ... (fix)".
ConfigFile parse_config(std::string_view text, const std::filesystem::path& file);

// Finds and reads the config file for `flag` (--config's value, "" when not
// given). A missing file is no error at the default location only.
ConfigFile load_config(const std::string& flag);

// Sets every option the file names and the command line did not (o.given), and
// records where each came from in o.from_config. A value an option would refuse
// is a UsageError naming FILE:LINE.
void apply_config(Options& o, const ConfigFile& config);

// The groups for @group: the groups file ($XDG_CONFIG_HOME/tpush/groups, in
// ClusterShell's format, when it exists) and the config file's [groups]; with
// neither, nullopt.
std::optional<inventory::HostGroups> load_groups(const Options& o);

// Where the config file is looked for when neither --config nor TPUSH_CONFIG says.
std::filesystem::path config_default_file();

// Where the groups file is looked for.
std::filesystem::path groups_file();

// One key as `tpush config` shows it: the value in effect ("" when nothing sets
// it) and where it came from ("command line", "config FILE:LINE", "TPUSH_ZONE",
// "default"; when unset, what applies instead).
struct ConfigValue {
  std::string key, value, from;
  bool per_worker = false;  // a reach key: ssh_config may rank above the config file
};
std::vector<ConfigValue> describe_config(const Options& o);

// The keys a config file may set, in the order `tpush config` lists them.
std::vector<std::string_view> config_keys();

}  // namespace tpush::commands
