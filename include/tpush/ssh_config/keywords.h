// Every keyword OpenSSH 9.2 (as Debian 12 builds it) knows in ssh_config:
// what it does in tpush and what kind of value it takes. A building block
// of config.h.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tpush::ssh_config {

// What a keyword does in tpush.
enum class ConfigKey : uint8_t {
  // Structure, handled by the parser.
  host, match, include,
  // Values tpush resolves per host.
  hostname, user, port, identity_file, certificate_file, identities_only, identity_agent, proxy_jump,
  proxy_command, connect_timeout, server_alive_interval, server_alive_count_max,
  strict_host_key_checking, user_known_hosts_file, global_known_hosts_file, host_key_alias,
  address_family, connection_attempts, forward_agent,
  // Values that change how the others resolve.
  batch_mode,             // Debian: BatchMode yes makes ServerAliveInterval default to 300
  ignore_unknown,         // which unknown keywords are no error
  canonicalize_hostname,  // not supported: a warning unless `no`
  // Known to OpenSSH: the value is checked, then ignored.
  other,
  // Known to OpenSSH, which says "Unsupported option" and goes on: a warning.
  unsupported,
};

// How a keyword's arguments are read and checked (readconf.c's cases).
enum class ValueKind : uint8_t {
  structure,        // Host, Match, Include: the parser's business
  anything,         // deprecated or unsupported keywords: any arguments
  flag,             // yes, no, true, false
  yes_no_ask,       // a flag or ask
  strict_host_key,  // a flag, ask, off, accept-new
  address_family,   // inet, inet6, any
  canonicalize,     // a flag or always
  compression,      // yes, no
  control_master,   // a flag, auto, ask, autoask
  pubkey_auth,      // a flag, unbound, host-bound
  request_tty,      // a flag, force, auto
  session_type,     // none, subsystem, default
  tunnel,           // a flag, ethernet, point-to-point
  integer,          // 0 .. 2147483647
  time,             // seconds, `1h30m` style, or `none`
  port,             // 1 .. 65535 or a service name
  text,             // exactly one non-empty argument
  algorithms,       // one argument (the algorithm names are not checked)
  command,          // the rest of the line, as written
  proxy_jump,       // `none` or [user@]host[:port] hops separated by commas
  file_list,        // one or more files, or `none` alone
  word_list,        // one or more words, or `none` alone (LogVerbose)
  domain_list,      // CanonicalDomains
  cname_rules,      // CanonicalizePermittedCNAMEs
  send_env,         // variable names (a leading `-` removes), no `=`
  set_env,          // NAME=VALUE ...
  agent_socket,     // IdentityAgent: a path, `none`, SSH_AUTH_SOCK, $VAR or ${VAR}
  forward_agent,    // ForwardAgent: a flag or an agent socket
  add_keys,         // AddKeysToAgent: a flag, ask, confirm [time], or a time
  escape_char,      // a character, ^X or none
  ip_qos,           // one or two DSCP names or numbers
  rekey_limit,      // default or a size, then optionally a time or none
  local_forward,    // two arguments (the forwarding itself is not checked)
  remote_forward,   // one or two arguments (not checked)
  dynamic_forward,  // one argument (not checked)
  permit_open,      // any, none, or host:port ... (the ports are not checked)
  tunnel_device,    // any or a number, optionally :remote
  control_persist,  // yes/no/true/false (lowercase only) or a time
  octal_mask,       // StreamLocalBindMask
  log_level,
  log_facility,
  digest,           // FingerprintHash
};

struct KeywordInfo {
  std::string_view name;  // as ssh_config(5) spells it, e.g. "HostName"
  ConfigKey key;
  ValueKind kind;
};

// The keyword (any case), or nullptr.
const KeywordInfo* find_keyword(std::string_view name);

// The known keyword nearest to `lowercase_name` (spelled as in the manual),
// or "" when none is close enough to suggest.
std::string closest_keyword(std::string_view lowercase_name);

// The error for a keyword OpenSSH does not know: a "did you mean" when one
// is close, and how IgnoreUnknown lets a newer ssh's keyword pass.
std::string unknown_keyword_message(std::string_view lowercase_name);

}  // namespace tpush::ssh_config
