#include "tpush/ssh_config/jump.h"

#include <netdb.h>
#include <netinet/in.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <optional>

#include "tpush/util/string.h"

namespace tpush::ssh_config {

namespace {

// `%XX` and `+` decoding of an ssh:// URI's user part.
std::optional<std::string> url_decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%') {
      if (i + 2 >= s.size() || !std::isxdigit(static_cast<unsigned char>(s[i + 1])) ||
          !std::isxdigit(static_cast<unsigned char>(s[i + 2])))
        return std::nullopt;
      out += static_cast<char>(std::strtol(std::string(s.substr(i + 1, 2)).c_str(), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// Splits `host[:rest]`, `[v6]:rest` or (with `allow_slash`) `host/rest`.
// nullopt when malformed; `rest` is nullopt when nothing follows.
struct HostPart {
  std::string_view host;
  char delimiter = '\0';
  std::optional<std::string_view> rest;
};
std::optional<HostPart> split_host(std::string_view s) {
  std::size_t end;
  if (!s.empty() && s.front() == '[') {
    const std::size_t close = s.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    end = close + 1;
  } else {
    end = std::min(s.find_first_of(":/"), s.size());
  }
  HostPart part{s.substr(0, end), '\0', std::nullopt};
  if (end == s.size()) return part;
  if (s[end] != ':' && s[end] != '/') return std::nullopt;
  part.delimiter = s[end];
  part.rest = s.substr(end + 1);
  return part;
}

std::string_view strip_brackets(std::string_view host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') return host.substr(1, host.size() - 2);
  return host;
}

// ssh://[user[;params]@]host[:port][/]: 1 when `s` is no ssh:// URI, 0 when
// parsed, -1 when malformed.
int parse_ssh_uri(std::string_view s, JumpHop& hop) {
  constexpr std::string_view kScheme = "ssh://";
  if (!s.starts_with(kScheme)) return 1;
  s.remove_prefix(kScheme.size());
  hop = JumpHop{};
  if (const std::size_t at = s.find('@'); at != std::string_view::npos) {
    std::string_view user = s.substr(0, at);
    user = user.substr(0, user.find(';'));
    if (user.empty()) return -1;
    std::optional<std::string> decoded = url_decode(user);
    if (!decoded) return -1;
    hop.user = std::move(*decoded);
    s.remove_prefix(at + 1);
  }
  const std::optional<HostPart> part = split_host(s);
  if (!part || part->host.empty()) return -1;
  hop.host = std::string(strip_brackets(part->host));
  if (!valid_domain(hop.host)) return -1;
  if (hop.host.back() == '.') hop.host.pop_back();  // as OpenSSH's valid_domain() does
  std::optional<std::string_view> rest = part->rest;
  if (rest && !rest->empty() && part->delimiter == ':') {
    const std::size_t slash = rest->find('/');
    hop.port = parse_port(rest->substr(0, slash));
    if (hop.port <= 0) return -1;
    rest = slash == std::string_view::npos ? std::nullopt : std::optional(rest->substr(slash + 1));
  }
  if (rest && !rest->empty()) return -1;  // a path is not allowed here
  return 0;
}

// [user@]host[:port]
bool parse_user_host_port(std::string_view s, JumpHop& hop) {
  hop = JumpHop{};
  if (const std::size_t at = s.rfind('@'); at != std::string_view::npos) {
    if (at == 0) return false;
    hop.user = std::string(s.substr(0, at));
    s.remove_prefix(at + 1);
  }
  const std::optional<HostPart> part = split_host(s);
  if (!part || part->delimiter == '/' || part->host.empty()) return false;
  hop.host = std::string(strip_brackets(part->host));
  if (part->rest && !part->rest->empty()) {
    hop.port = parse_port(*part->rest);
    if (hop.port <= 0) return false;
  }
  return true;
}

std::string hop_display(const JumpHop& hop) {
  const bool numeric = hop.host.find(':') != std::string::npos ||
                       hop.host.find_first_not_of("1234567890.") == std::string::npos;
  std::string out = hop.user.empty() ? "" : hop.user + "@";
  out += numeric ? "[" + hop.host + "]" : hop.host;
  if (hop.port > 0) out += ":" + std::to_string(hop.port);
  return out;
}

}  // namespace

bool valid_domain(std::string_view name) {
  if (name.empty() || !std::isalnum(static_cast<unsigned char>(name.front()))) return false;
  char last = '\0';
  for (const char c : name) {
    if (last == '.' && c == '.') return false;
    if (c != '.' && c != '-' && c != '_' && !std::isalnum(static_cast<unsigned char>(c))) return false;
    last = c;
  }
  return true;
}

int parse_port(std::string_view text) {
  const std::string s(text);
  if (!s.empty()) {
    char* end = nullptr;
    errno = 0;
    const long long n = std::strtoll(s.c_str(), &end, 10);
    if (end != s.c_str() && *end == '\0') return errno == 0 && n >= 0 && n <= 65535 ? static_cast<int>(n) : -1;
  }
  servent entry{};
  servent* found = nullptr;
  char buf[4096];
  if (getservbyname_r(s.c_str(), "tcp", &entry, buf, sizeof buf, &found) == 0 && found != nullptr)
    return ntohs(static_cast<uint16_t>(found->s_port));
  return -1;
}

std::string parse_proxy_jump(std::string_view text, ProxyJumpValue& out) {
  out = ProxyJumpValue{};
  if (util::iequals(text, "none")) {
    out.none = true;
    out.display = "none";
    return "";
  }
  // Debian's ssh (with fixes from OpenSSH 10.3) reads up to the first blank,
  // then drops a comment.
  std::string_view hosts = text.substr(0, text.find_first_of(" \t"));
  hosts = hosts.substr(0, hosts.find('#'));
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = std::min(hosts.find(',', start), hosts.size());
    const std::string_view item = hosts.substr(start, comma - start);
    JumpHop hop;
    const int uri = parse_ssh_uri(item, hop);
    if (uri < 0 || (uri == 1 && !parse_user_host_port(item, hop)))
      return "\"" + std::string(item) + "\" is not [user@]host[:port] or ssh://[user@]host[:port]";
    out.hops.push_back(std::move(hop));
    if (comma == hosts.size()) break;
    start = comma + 1;
  }
  // The hops before the last one are shown as written.
  if (const std::size_t last_comma = hosts.rfind(','); last_comma != std::string_view::npos)
    out.display = std::string(hosts.substr(0, last_comma)) + ",";
  out.display += hop_display(out.hops.back());
  return "";
}

bool valid_command_line_host(std::string_view host) {
  if (!host.empty() && host.front() == '-') return false;
  for (const char c : host)
    if (std::string_view("'`\"$\\;&<>|(){},").find(c) != std::string_view::npos ||
        std::isspace(static_cast<unsigned char>(c)) || std::iscntrl(static_cast<unsigned char>(c)))
      return false;
  return true;
}

bool valid_command_line_user(std::string_view user) {
  if (!user.empty() && user.front() == '-') return false;
  for (std::size_t i = 0; i < user.size(); ++i) {
    const char c = user[i];
    const char next = i + 1 < user.size() ? user[i + 1] : '\0';
    if (std::iscntrl(static_cast<unsigned char>(c)) ||
        std::string_view("'`\";&<>|(){}").find(c) != std::string_view::npos)
      return false;
    if (std::isspace(static_cast<unsigned char>(c)) && next == '-') return false;  // would read as an option
    if (c == '\\' && next == '\0') return false;
  }
  return true;
}

}  // namespace tpush::ssh_config
