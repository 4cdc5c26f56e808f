// `%x` tokens, `${NAME}` and `~` in ssh_config values, expanded the way
// OpenSSH 9.2 expands them (misc.c: percent_expand, dollar_expand,
// tilde_expand). A building block of config.h; tpush may also use
// expand_tokens() to re-expand a value written with other user or port.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tpush::ssh_config {

// The value of each token letter (%h, %p, ...) for one host.
class TokenTable {
 public:
  void set(char token, std::string value);
  // nullptr when the letter has no value.
  const std::string* get(char token) const;

 private:
  // A dozen letters at most: a list is cheaper to make for each host than a
  // table of every character.
  std::vector<std::pair<char, std::string>> values_;
};

// The tokens each value may use, as OpenSSH 9.2 expands them.
inline constexpr std::string_view kHostNameTokens = "h";          // HostName
inline constexpr std::string_view kProxyCommandTokens = "hknpr";  // ProxyCommand
// IdentityFile, IdentityAgent, UserKnownHostsFile (and ControlPath, ...).
inline constexpr std::string_view kClientTokens = "CLiklnpdhru";

// Replaces `%x` for each letter x in `allowed` by its value in `tokens`, `%%`
// by `%`, and with `dollar` also `${NAME}` by that environment variable.
// Returns "" or what is wrong: an unknown token (naming the allowed ones), a
// `%` at the end, an unterminated or empty `${}`, an unset variable.
std::string expand_tokens(std::string_view text, std::string_view allowed,
                          const TokenTable& tokens, bool dollar, std::string& out);

// Checks the `${NAME}` references in `text` (unterminated, empty, unset) as
// OpenSSH does for IdentityAgent and ForwardAgent when reading the file.
std::string check_dollar_references(std::string_view text);

// `~` (home + "/"), `~/path` and `~user/path` (from the passwd database);
// other paths are returned unchanged. Returns "" or `no such user "x"`.
std::string expand_tilde(std::string_view path, std::string_view home, std::string& out);

// %C: hex SHA-1 of local host name, host, port and remote user.
std::string connection_hash(std::string_view local_host, std::string_view host,
                            std::string_view port, std::string_view user);

// This machine's name (%l) and its first label (%L).
struct LocalHostNames {
  std::string full, short_name;
};
LocalHostNames local_host_names();

}  // namespace tpush::ssh_config
