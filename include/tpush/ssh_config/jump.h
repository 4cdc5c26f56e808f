// Ports, domain names and ProxyJump hosts as OpenSSH 9.2 reads them in
// ssh_config (misc.c: a2port, valid_domain, parse_user_host_port, parse_uri;
// readconf.c: parse_jump). A building block of config.h.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tpush::ssh_config {

// A port number 0..65535 or a service name from /etc/services ("ssh");
// -1 when it is neither. (OpenSSH then refuses 0 where a port is needed.)
int parse_port(std::string_view text);

// OpenSSH's valid_domain(): letters, digits, `-`, `_` and single dots,
// starting with a letter or digit. (OpenSSH then drops one trailing dot.)
bool valid_domain(std::string_view name);

// One hop of a ProxyJump: `[user@]host[:port]` or `ssh://[user@]host[:port]`.
struct JumpHop {
  std::string user;  // "" when not given
  std::string host;  // without [ ] around an IPv6 address
  int port = -1;     // -1 when not given
};

// A ProxyJump value: `none`, or hops separated by commas, connected in order.
struct ProxyJumpValue {
  bool none = false;
  std::vector<JumpHop> hops;
  // The value as `ssh -G` prints it: the hops before the last as written,
  // then the last one rebuilt from its parts ([host] when it is numeric or
  // has a `:`, `:port` only when given).
  std::string display;
};

// Parses `text`, the rest of the ProxyJump line: `none` (any case), else
// the hops up to the first blank (Debian's ssh reads no further) and a `#`.
// Returns "" or which hop is malformed and why.
std::string parse_proxy_jump(std::string_view text, ProxyJumpValue& out);

// The names ssh accepts on its command line (-l, user@host, the host, -J and
// -o ProxyJump), since they end up in %-tokens: no shell metacharacters,
// blanks or control characters in a host, none of `'"`;&<>|(){}` or control
// characters in a user, neither starting with `-`.
bool valid_command_line_host(std::string_view host);
bool valid_command_line_user(std::string_view user);

}  // namespace tpush::ssh_config
