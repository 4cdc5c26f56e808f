// OpenSSH client configuration (ssh_config(5)), read the way OpenSSH 9.2 as
// Debian 12 ships it reads it, so a host resolves in tpush as it does in `ssh`.
//
//   SshConfigSources sources{.options = {"ConnectTimeout=5"},            // -o
//                            .files = ssh_config_files(home, f_option),   // -F or the defaults
//                            .home = home, .local_user = user};
//   const SshConfig config = SshConfig::load(sources);   // every file read once
//   if (!config.errors().empty()) ...                     // ssh would refuse to run
//   for (...) {
//     HostConfig host = config.resolve({.host = "w3", .user = flag_user});
//     if (!host.errors.empty()) ...                       // ssh would refuse this host
//     host.port.value                                     // unset: tpush's default applies
//   }
//
// Semantics, as OpenSSH's: -o lines first, then each file in order; the first
// value obtained for a keyword wins (IdentityFile adds up; a known-hosts line
// with several files is one value). `Host` patterns (`*`, `?`, `!` excludes,
// whitespace-separated, case-sensitive against the name as written) and
// `Match all|host|originalhost|user|localuser` (each may be negated with `!`;
// comma lists; host and originalhost compare lowercase) start blocks. `Match
// exec|canonical|final` and criteria OpenSSH 9.2 does not know (tagged,
// localnetwork, ...) give one warning and the block never applies. `Include`
// (globs; relative to ~/.ssh in user files, to /etc/ssh in the system file;
// at most 16 levels) is read once at load and applies where it stands, only
// when its block does. Unknown keywords are errors unless an IgnoreUnknown
// obtained before covers them; bad values are errors. CanonicalizeHostname
// is not done (a warning says so). ProxyJump and ProxyCommand: whichever
// comes first wins and `ProxyCommand none` stops both, but `ProxyJump none`
// stops only later ProxyJumps (Debian's ssh has OpenSSH 10.3's rule there).
//
// Precedence in tpush: its own -l/-p, else the user@ and :port written in the
// host list, go in the HostQuery (user_from/port_from name which). OpenSSH
// sets those before it reads the config, so they win over -o and the files,
// and `Match user` and %r see them; the query's host and user are checked as
// ssh checks its command line. A field nothing set stays unset, so tpush's
// defaults apply; with_openssh_defaults() gives OpenSSH's instead.
//
// Values are expanded where OpenSSH 9.2 expands them: HostName (%h %%, then
// lowercased unless it is an address), IdentityFile, IdentityAgent and
// UserKnownHostsFile (~, %C %L %i %k %l %n %p %d %h %r %u %%, ${ENV}),
// GlobalKnownHostsFile (~ only), ProxyCommand (%h %k %n %p %r %%). `~` is
// `home`, where OpenSSH uses the passwd entry's home. Unset user and port
// expand as OpenSSH's defaults (local_user, 22); a caller with other
// defaults can expand the `written` values again with expand_tokens().
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tpush/ssh_config/jump.h"
#include "tpush/ssh_config/values.h"

namespace tpush::ssh_config {

// What kind of file a config file is; it decides how Include reads relative
// paths and whether the file's owner and mode are checked.
enum class ConfigScope : uint8_t {
  user,      // ~/.ssh/config: ssh refuses it (and its Includes) if others may write it
  named,     // ssh -F FILE: a user file whose own permissions are not checked
  system,    // /etc/ssh/ssh_config: relative Includes under /etc/ssh, no `~`
};

struct ConfigFile {
  std::filesystem::path path;
  ConfigScope scope = ConfigScope::user;
};

// The files `ssh` reads: with -F, that file alone (`-F none`: no file);
// otherwise home/.ssh/config, then /etc/ssh/ssh_config. A missing default
// file is skipped; a missing -F file is an error at load.
std::vector<ConfigFile> ssh_config_files(const std::filesystem::path& home,
                                         const std::optional<std::string>& f_option = std::nullopt);

struct SshConfigSources {
  std::vector<std::string> options;  // -o lines ("Keyword=Value" or "Keyword Value"), in order
  std::vector<ConfigFile> files;
  std::filesystem::path home;        // ~, %d, and ~/.ssh for relative Includes
  std::string local_user;            // %u, Match localuser, and OpenSSH's default User
  std::filesystem::path system_dir = "/etc/ssh";  // relative Includes in system files
};

// Where a value came from.
struct ConfigOrigin {
  enum class Kind : uint8_t {
    unset,            // nothing set it: tpush's own default applies
    given,            // the query (user@ / :port / -l / -p): `where` says which
    command_line,     // a -o line
    file,             // `where`:`line`
    openssh_default,  // filled by SshConfig::with_openssh_defaults()
  };
  Kind kind = Kind::unset;
  std::string where;  // file as shown (under home as "~/..."), or the query's label
  int line = 0;

  // "~/.ssh/config:12", "-o", the query's label, "default" or "unset".
  std::string to_string() const;
};

template <typename T>
struct ConfigField {
  std::optional<T> value;  // empty: unset
  ConfigOrigin origin;
  bool is_set() const { return value.has_value(); }
};

struct IdentityFileEntry {
  std::string path;     // expanded; "" for an entry written `none` (it only stops the defaults)
  std::string written;  // as in the file (what `ssh -G` prints)
  ConfigOrigin origin;
};

struct ProxySetting {
  enum class Kind : uint8_t { none, command, jump };
  Kind kind = Kind::none;   // none: `ProxyCommand none` or `ProxyJump none`
  std::string command;      // ProxyCommand with its tokens expanded; run as `sh -c "exec ..."`
  std::string command_written;
  ProxyJumpValue jump;      // ProxyJump hops; jump.display is what `ssh -G` prints
};

struct HostConfig {
  std::string host;  // as queried: %n, what Host and Match originalhost see

  ConfigField<std::string> hostname;  // expanded and lowercased (addresses in canonical form)
  ConfigField<std::string> user;
  ConfigField<uint16_t> port;
  std::vector<IdentityFileEntry> identity_files;  // in order; empty: unset
  std::vector<IdentityFileEntry> certificate_files;  // in order; none by default
  ConfigField<bool> identities_only;
  // Expanded. Besides a socket path: `none` (no agent), `SSH_AUTH_SOCK` (the
  // variable, as without the keyword), `$NAME` (that variable's value).
  ConfigField<std::string> identity_agent;
  ConfigField<ProxySetting> proxy;                 // ProxyCommand or ProxyJump: the first wins
  ConfigField<int> connect_timeout;                // seconds
  ConfigField<int> server_alive_interval;          // seconds
  ConfigField<int> server_alive_count_max;
  ConfigField<StrictHostKeyChecking> strict_host_key_checking;
  // Expanded paths; set and empty means `none`.
  ConfigField<std::vector<std::string>> user_known_hosts_files;
  ConfigField<std::vector<std::string>> global_known_hosts_files;
  ConfigField<std::string> host_key_alias;         // lowercased
  ConfigField<AddressFamily> address_family;
  ConfigField<int> connection_attempts;
  ConfigField<bool> batch_mode;
  // "yes", "no", or an agent socket as written (`ssh -G` prints it so; a
  // `$NAME` is read when the run starts).
  ConfigField<std::string> forward_agent;

  // Why ssh would refuse this host, each with file:line and the fix: an
  // unknown keyword no IgnoreUnknown covers here, an unknown %token, an
  // unset ${VAR}, ConnectionAttempts 0, a ProxyJump to the host itself, ...
  std::vector<std::string> errors;
};

// What resolve() is asked: the host as written, and what the command line
// or the host list already gave (OpenSSH sets these before it reads the
// config, so they win, and `Match user` and %r see them).
struct HostQuery {
  std::string host;
  std::optional<std::string> user;
  std::optional<uint16_t> port;
  std::string user_from = "command line";  // ConfigOrigin::where for a given user
  std::string port_from = "command line";
};

struct ParsedConfig;

class SshConfig {
 public:
  // Reads every source once. Never throws: problems are in errors() and
  // warnings(), each "file:line: what is wrong; how to fix it".
  static SshConfig load(const SshConfigSources& sources);
  // load(), then a UsageError listing the errors, if any.
  static SshConfig load_or_throw(const SshConfigSources& sources);

  // Errors: ssh would refuse to run with this configuration.
  const std::vector<std::string>& errors() const;
  // Warnings: tpush ignores something ssh would do (Match exec, ...) or ssh
  // itself warns (an unsupported option).
  const std::vector<std::string>& warnings() const;

  // The configuration for one host: cheap (walks the parsed lines, touches
  // no file), const and safe to call from several threads.
  HostConfig resolve(const HostQuery& query) const;

  // Queries with the same key resolve to the same HostConfig but for `host`
  // (so with the same HostName, or none): the same Host and Match lines apply
  // to them, with the same user and port given, and nothing finish() expands
  // can take the host (no '%' in HostName, IdentityFile, CertificateFile, IdentityAgent,
  // UserKnownHostsFile or ProxyCommand, no ProxyJump that may end at the host).
  // nullopt when that cannot be said, or resolve() would report errors: then
  // resolve the query itself. Costs one walk of the lines, copying nothing
  // but HostName and User; for callers that keep what they make of a
  // HostConfig (tpush workers on 100,000 hosts of a few kinds).
  std::optional<std::string> sharing_key(const HostQuery& query) const;

  // `config` with every unset field filled with OpenSSH 9.2's default as
  // Debian builds it (origin openssh_default): hostname = host lowercased,
  // user = local_user, port 22, the seven default identity files,
  // StrictHostKeyChecking ask, ServerAliveInterval 0 (300 with BatchMode),
  // ServerAliveCountMax 3, ConnectionAttempts 1, AddressFamily any,
  // IdentitiesOnly and BatchMode no, ~/.ssh/known_hosts{,2} and
  // /etc/ssh/ssh_known_hosts{,2}. ConnectTimeout, IdentityAgent, the proxy
  // and HostKeyAlias stay unset (OpenSSH has no default for them).
  HostConfig with_openssh_defaults(HostConfig config) const;

  // What the tokens need about this side: home (%d), user (%u), this
  // machine's name (%l) and its first label (%L).
  struct Local {
    std::string home, user, host, short_host;
  };

 private:
  std::shared_ptr<const ParsedConfig> parsed_;
  Local local_;
};

}  // namespace tpush::ssh_config
