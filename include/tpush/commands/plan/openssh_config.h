// An ssh_config for OpenSSH's own `ssh` that reaches each worker exactly as
// tpush does (address, port, user, keys, jump hosts or proxy command, host-key
// rules, timeouts): what `tpush rsync` gives rsync's ssh with -F. Values that
// ssh would expand again (%h, ~ ...) are written so they read back as they are.
#pragma once

#include <string>
#include <vector>

#include "tpush/commands/plan/worker_reach.h"

namespace tpush::commands {

struct OpenSshHost {
  std::string alias;   // the Host name ssh is given ("tpush-w0")
  const Reach* reach;
  std::string pinned_host_key;  // "type base64" from gcloud, or ""
  std::vector<std::string> host_key_aliases;  // gcloud's names for the worker's key
};

// The config text. `pinned_file` is where the caller writes
// pinned_known_hosts_lines() (read as an extra known_hosts file), or "".
std::string openssh_config(const std::vector<OpenSshHost>& hosts, const std::string& pinned_file);

// known_hosts lines for the pinned keys, under the name ssh looks them up by.
std::string pinned_known_hosts_lines(const std::vector<OpenSshHost>& hosts);

// `value` for an ssh_config line whose keyword expands %-tokens: % doubled,
// quoted when it holds blanks or quotes.
std::string config_argument(const std::string& value, bool expands_tokens);

}  // namespace tpush::commands
