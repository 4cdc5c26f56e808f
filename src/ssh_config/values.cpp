#include "tpush/ssh_config/values.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <span>

#include "tpush/ssh_config/tokens.h"
#include "tpush/util/string.h"

namespace tpush::ssh_config {

namespace {

using V = ValueKind;
using util::iequals;

// A word and the number it stands for (ConfigValue::number).
struct Choice {
  std::string_view word;
  int number;
};
constexpr Choice kFlag[] = {{"true", 1}, {"false", 0}, {"yes", 1}, {"no", 0}};
constexpr Choice kYesNoAsk[] = {{"true", 1}, {"false", 0}, {"yes", 1}, {"no", 0}, {"ask", 2}};
constexpr int number(StrictHostKeyChecking s) { return static_cast<int>(s); }
constexpr Choice kStrict[] = {{"true", number(StrictHostKeyChecking::yes)},
                              {"false", number(StrictHostKeyChecking::no)},
                              {"yes", number(StrictHostKeyChecking::yes)},
                              {"no", number(StrictHostKeyChecking::no)},
                              {"ask", number(StrictHostKeyChecking::ask)},
                              {"off", number(StrictHostKeyChecking::no)},
                              {"accept-new", number(StrictHostKeyChecking::accept_new)}};
constexpr Choice kAddressFamily[] = {{"inet", static_cast<int>(AddressFamily::inet)},
                                     {"inet6", static_cast<int>(AddressFamily::inet6)},
                                     {"any", static_cast<int>(AddressFamily::any)}};
constexpr Choice kCanonicalize[] = {{"true", 1}, {"false", 0}, {"yes", 1}, {"no", 0}, {"always", 2}};
constexpr Choice kCompression[] = {{"yes", 1}, {"no", 0}};
constexpr Choice kControlMaster[] = {{"true", 1}, {"yes", 1}, {"false", 0}, {"no", 0},
                                     {"auto", 2}, {"ask", 3}, {"autoask", 4}};
constexpr Choice kPubkeyAuth[] = {{"true", 3}, {"false", 0},   {"yes", 3},
                                  {"no", 0},   {"unbound", 1}, {"host-bound", 2}};
constexpr Choice kRequestTty[] = {{"true", 2}, {"yes", 2}, {"false", 1}, {"no", 1}, {"force", 3}, {"auto", 0}};
constexpr Choice kSessionType[] = {{"none", 0}, {"subsystem", 1}, {"default", 2}};
constexpr Choice kTunnel[] = {{"ethernet", 2}, {"point-to-point", 1}, {"true", 1},
                              {"yes", 1},      {"false", 0},          {"no", 0}};
constexpr Choice kAddKeys[] = {{"true", 1}, {"false", 0}, {"yes", 1}, {"no", 0}, {"ask", 2}, {"confirm", 3}};
constexpr Choice kLogLevel[] = {{"QUIET", 0}, {"FATAL", 1},  {"ERROR", 2},  {"INFO", 3},  {"VERBOSE", 4},
                                {"DEBUG", 5}, {"DEBUG1", 5}, {"DEBUG2", 6}, {"DEBUG3", 7}};
constexpr Choice kLogFacility[] = {{"DAEMON", 0}, {"USER", 1},   {"AUTH", 2},   {"AUTHPRIV", 3},
                                   {"LOCAL0", 4}, {"LOCAL1", 5}, {"LOCAL2", 6}, {"LOCAL3", 7},
                                   {"LOCAL4", 8}, {"LOCAL5", 9}, {"LOCAL6", 10}, {"LOCAL7", 11}};
constexpr Choice kDigest[] = {{"MD5", 0}, {"SHA1", 1}, {"SHA256", 2}, {"SHA384", 3}, {"SHA512", 4}};
constexpr Choice kIpQos[] = {{"none", 0}, {"af11", 0}, {"af12", 0}, {"af13", 0}, {"af21", 0},
                             {"af22", 0}, {"af23", 0}, {"af31", 0}, {"af32", 0}, {"af33", 0},
                             {"af41", 0}, {"af42", 0}, {"af43", 0}, {"cs0", 0},  {"cs1", 0},
                             {"cs2", 0},  {"cs3", 0},  {"cs4", 0},  {"cs5", 0},  {"cs6", 0},
                             {"cs7", 0},  {"ef", 0},   {"le", 0},   {"lowdelay", 0},
                             {"throughput", 0}, {"reliability", 0}};

// The words a one-word kind accepts; empty for the other kinds.
std::span<const Choice> choices_of(ValueKind kind) {
  switch (kind) {
    case V::flag: return kFlag;
    case V::yes_no_ask: return kYesNoAsk;
    case V::strict_host_key: return kStrict;
    case V::address_family: return kAddressFamily;
    case V::canonicalize: return kCanonicalize;
    case V::compression: return kCompression;
    case V::control_master: return kControlMaster;
    case V::pubkey_auth: return kPubkeyAuth;
    case V::request_tty: return kRequestTty;
    case V::session_type: return kSessionType;
    case V::tunnel: return kTunnel;
    case V::log_level: return kLogLevel;
    case V::log_facility: return kLogFacility;
    case V::digest: return kDigest;
    default: return {};
  }
}

const Choice* find_choice(std::span<const Choice> choices, std::string_view word) {
  for (const Choice& c : choices)
    if (iequals(c.word, word)) return &c;
  return nullptr;
}

std::string choice_words(std::span<const Choice> choices) {
  std::string out;
  for (std::size_t i = 0; i < choices.size(); ++i)
    out += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + std::string(choices[i].word);
  return out;
}

std::string in_quotes(const std::string& s) { return "\"" + s + "\""; }

// strtonum(text, 0, INT_MAX): "" or why not.
std::string parse_integer(const std::string& text, int& out) {
  if (text.empty()) return "is missing";
  char* end = nullptr;
  errno = 0;
  const long long n = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0') return "is not a whole number";
  if (n < 0) return "is negative";
  if (errno == ERANGE || n > INT_MAX) return "is too large";
  out = static_cast<int>(n);
  return "";
}

bool valid_env_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// IdentityAgent and ForwardAgent: ${VAR} must be set now; $VAR must be a name.
std::string check_agent_socket(const std::string& arg) {
  if (std::string err = check_dollar_references(arg); !err.empty()) return err;
  if (arg.size() >= 1 && arg[0] == '$' && (arg.size() < 2 || arg[1] != '{') &&
      !valid_env_name(std::string_view(arg).substr(1)))
    return in_quotes(arg) + " is no environment variable name; write $NAME or ${NAME}";
  return "";
}

// OpenBSD's scan_scaled, loosely: [+-]digits[.digits][unit], the unit one
// of B K M G T P E (powers of 1024). The fraction is ignored.
bool parse_size(std::string_view s, long long& value) {
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  const std::size_t digits = i;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i == digits) return false;
  value = std::strtoll(std::string(s.substr(0, i)).c_str(), nullptr, 10);
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  }
  constexpr std::string_view kUnits = "BKMGTPE";
  if (i < s.size()) {
    const std::size_t unit = kUnits.find(static_cast<char>(std::toupper(static_cast<unsigned char>(s[i]))));
    if (unit == std::string_view::npos) return false;
    for (std::size_t u = 0; u < unit && value > -(1LL << 50) && value < (1LL << 50); ++u) value *= 1024;
    ++i;
  }
  return i == s.size();
}

bool valid_ip_qos(const std::string& s) {
  if (find_choice(kIpQos, s)) return true;
  char* end = nullptr;
  const long n = std::strtol(s.c_str(), &end, 0);
  return !s.empty() && *end == '\0' && n >= 0 && n <= 255;
}

bool valid_tunnel_id(const std::string& s) {
  int n = 0;
  return iequals(s, "any") || (parse_integer(s, n).empty() && n <= INT_MAX - 2);
}

constexpr std::string_view kTimeHint = "use seconds or a time such as 30s, 5m, 1h30m";

std::string_view skip_blanks_and_equals(std::string_view rest) {
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t' || rest.front() == '=')) rest.remove_prefix(1);
  return rest;
}

// Keywords that take a list: every argument non-empty, `none` only alone.
std::string check_list(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a.empty()) return "empty value; remove the \"\"";
    if (iequals(a, "none") && args.size() > 1) return "\"none\" must be the only value; remove it or the others";
  }
  return "";
}

// The kinds that take the first argument alone.
std::string check_one(ValueKind kind, const std::string& first, ConfigValue& out) {
  switch (kind) {
    case V::integer:
      if (std::string why = parse_integer(first, out.number); !why.empty())
        return (first.empty() ? std::string("the value") : in_quotes(first)) + " " + why +
               "; use a whole number from 0 to 2147483647";
      return "";
    case V::time:
      if (first.empty()) return "missing value; " + std::string(kTimeHint) + " (or none)";
      out.number = first == "none" ? -1 : parse_config_time(first);
      if (first != "none" && out.number < 0)
        return in_quotes(first) + " is not a time; " + std::string(kTimeHint) + " (or none)";
      return "";
    case V::port:
      if (first.empty()) return "missing value; use a port number from 1 to 65535";
      out.number = parse_port(first);
      if (out.number <= 0) return in_quotes(first) + " is not a port; use a number from 1 to 65535 or a service name";
      return "";
    case V::text:
    case V::algorithms:
      if (first.empty()) return "missing value";
      out.text = first;
      return "";
    case V::agent_socket:
    case V::forward_agent:
      if (first.empty()) return "missing value";
      if (const Choice* flag = kind == V::forward_agent ? find_choice(kFlag, first) : nullptr) {
        out.number = flag->number;  // yes or no; a socket otherwise
        return "";
      }
      out.text = first;
      return check_agent_socket(first);
    case V::escape_char: {
      if (first.empty()) return "missing value";
      const bool ok = first == "none" || first.size() == 1 ||
                      (first.size() == 2 && first[0] == '^' && static_cast<unsigned char>(first[1]) >= 64 &&
                       static_cast<unsigned char>(first[1]) < 128);
      return ok ? "" : in_quotes(first) + " is not an escape character; use one character, ^X or none";
    }
    case V::dynamic_forward:
      return first.empty() ? "missing value" : "";
    case V::tunnel_device: {
      if (first.empty()) return "missing value";
      const std::size_t colon = first.find(':');
      const bool ok = colon == std::string::npos
                          ? valid_tunnel_id(first)
                          : valid_tunnel_id(first.substr(0, colon)) && valid_tunnel_id(first.substr(colon + 1));
      return ok ? "" : in_quotes(first) + " is not a tunnel device; use any or a number, optionally :remote";
    }
    case V::control_persist:
      if (first.empty()) return "missing value";
      if (first == "yes" || first == "no" || first == "true" || first == "false" || parse_config_time(first) >= 0)
        return "";
      return in_quotes(first) + " is not valid; use yes, no or a time such as 10m";
    case V::octal_mask: {
      if (first.empty()) return "missing value";
      char* end = nullptr;
      const long n = std::strtol(first.c_str(), &end, 8);
      if (end == first.c_str() || n < 0 || n > 0777) return in_quotes(first) + " is not an octal mask such as 0177";
      return "";
    }
    default:
      return "";
  }
}

// The kinds that take every argument on the line (or the line's rest as written).
bool takes_every_argument(ValueKind kind) {
  switch (kind) {
    case V::command:
    case V::proxy_jump:
    case V::file_list:
    case V::word_list:
    case V::domain_list:
    case V::cname_rules:
    case V::send_env:
    case V::set_env:
    case V::permit_open:
    case V::structure:
    case V::anything:
      return true;
    default:
      return false;
  }
}

std::string check_every(ValueKind kind, const ConfigLine& line, ConfigValue& out) {
  const std::vector<std::string>& args = line.args;
  switch (kind) {
    case V::command:
      out.text = std::string(skip_blanks_and_equals(line.rest));
      return "";
    case V::proxy_jump:
      return parse_proxy_jump(skip_blanks_and_equals(line.rest), out.jump);
    case V::file_list:
    case V::word_list:
      out.list = args;
      return check_list(args);
    case V::domain_list:
      if (std::string err = check_list(args); !err.empty()) return err;
      for (const std::string& a : args)
        if (!iequals(a, "none") && !valid_domain(a)) return in_quotes(a) + " is not a domain name";
      return "";
    case V::cname_rules:
      for (const std::string& a : args) {
        if (iequals(a, "none") && args.size() > 1) return "\"none\" must be the only value; remove it or the others";
        const std::size_t colon = a.find(':');
        if (!iequals(a, "none") && a != "*" && (colon == std::string::npos || colon + 1 == a.size()))
          return in_quotes(a) + " is not a rule; write source_domains:target_domains";
      }
      return "";
    case V::send_env:
      for (const std::string& a : args)
        if (a.empty() || a.find('=') != std::string::npos)
          return in_quotes(a) + " is not a variable name; SendEnv takes names, SetEnv takes NAME=VALUE";
      return "";
    case V::set_env:
      for (const std::string& a : args)
        if (a.find('=') == std::string::npos) return in_quotes(a) + " has no '='; write NAME=VALUE";
      return "";
    case V::permit_open:
      if (args.empty()) return "missing value; use any, none or host:port ...";
      for (const std::string& a : args)
        if ((iequals(a, "any") || iequals(a, "none")) && args.size() > 1) return in_quotes(a) + " must be the only value";
      return "";
    default:  // structure, anything
      return "";
  }
}

// The kinds that take one argument or two; sets `used` to how many they took.
std::string check_one_or_two(ValueKind kind, const std::vector<std::string>& args, std::size_t& used) {
  const std::string first = args.empty() ? std::string() : args[0];
  switch (kind) {
    case V::add_keys: {
      used = std::min<std::size_t>(args.size(), 2);
      const Choice* c = args.empty() ? nullptr : find_choice(kAddKeys, first);
      const bool has_time = args.size() > 1;
      const bool ok = c != nullptr ? (!has_time || (c->number == 3 && parse_config_time(args[1]) >= 0))
                                   : (!has_time && parse_config_time(first) >= 0);
      return ok ? "" : "use yes, no, ask, confirm [time] or a time such as 30m";
    }
    case V::ip_qos:
      used = std::min<std::size_t>(args.size(), 2);
      for (std::size_t i = 0; i < std::max<std::size_t>(used, 1); ++i)
        if (i >= args.size() || !valid_ip_qos(args[i]))
          return in_quotes(i < args.size() ? args[i] : "") +
                 " is not a DSCP value; use af11..af43, cs0..cs7, ef, le, lowdelay, throughput, reliability, "
                 "none or a number 0..255";
      return "";
    case V::rekey_limit: {
      if (first.empty()) return "missing value";
      long long size = 0;
      if (first != "default") {
        if (!parse_size(first, size)) return in_quotes(first) + " is not a size such as 1G or 500M";
        if (size != 0 && size < 16) return in_quotes(first) + " is too small; use at least 16 bytes";
      }
      if (args.size() > 1) {
        used = 2;
        if (args[1] != "none" && parse_config_time(args[1]) < 0)
          return in_quotes(args[1]) + " is not a time; " + std::string(kTimeHint) + " (or none)";
      }
      return "";
    }
    case V::local_forward:
      used = 2;
      if (first.empty()) return "missing value";
      if (args.size() < 2 || args[1].empty()) return "missing target; write [bind_address:]port host:hostport";
      return "";
    case V::remote_forward:
      used = std::min<std::size_t>(std::max<std::size_t>(args.size(), 1), 2);
      return first.empty() ? "missing value" : "";
    default:
      return "";
  }
}

bool takes_one_or_two(ValueKind kind) {
  return kind == V::add_keys || kind == V::ip_qos || kind == V::rekey_limit || kind == V::local_forward ||
         kind == V::remote_forward;
}

// Checks by kind. `used` says how many arguments the kind took; the caller
// reports any left over.
std::string check_kind(ValueKind kind, const ConfigLine& line, std::size_t& used, ConfigValue& out) {
  const std::vector<std::string>& args = line.args;
  const std::string first = args.empty() ? std::string() : args[0];
  used = 1;
  if (const std::span<const Choice> choices = choices_of(kind); !choices.empty()) {
    if (first.empty()) return "missing value; use " + choice_words(choices);
    const Choice* c = find_choice(choices, first);
    if (c == nullptr) return in_quotes(first) + " is not a valid value; use " + choice_words(choices);
    out.number = c->number;
    return "";
  }
  if (takes_every_argument(kind)) {
    used = args.size();
    return check_every(kind, line, out);
  }
  if (takes_one_or_two(kind)) return check_one_or_two(kind, args, used);
  return check_one(kind, first, out);
}

}  // namespace

int parse_config_time(std::string_view text) {
  if (text.empty()) return -1;
  long long total = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::string rest(text.substr(i));
    char* end = nullptr;
    errno = 0;
    const long n = std::strtol(rest.c_str(), &end, 10);
    if (end == rest.c_str() || n < 0 || (errno == ERANGE && (n == LONG_MIN || n == LONG_MAX))) return -1;
    i += static_cast<std::size_t>(end - rest.c_str());
    long long unit = 1;
    if (i < text.size()) {
      switch (text[i++]) {
        case 's': case 'S': unit = 1; break;
        case 'm': case 'M': unit = 60; break;
        case 'h': case 'H': unit = 3600; break;
        case 'd': case 'D': unit = 86400; break;
        case 'w': case 'W': unit = 604800; break;
        default: return -1;
      }
    }
    if (n > INT_MAX / unit) return -1;
    total += n * unit;
    if (total > INT_MAX) return -1;
  }
  return static_cast<int>(total);
}

std::string check_value(const KeywordInfo& keyword, const ConfigLine& line, ConfigValue& out) {
  out = ConfigValue{};
  std::size_t used = 0;
  std::string err = check_kind(keyword.kind, line, used, out);
  if (err.empty() && used < line.args.size()) {
    std::string extra;
    for (std::size_t i = used; i < line.args.size(); ++i) extra += (i == used ? "" : " ") + line.args[i];
    err = "takes " + std::string(used == 1 ? "one value" : "at most " + std::to_string(used) + " values") + "; " +
          in_quotes(extra) + " is extra (quote a value that contains blanks)";
  }
  return err.empty() ? "" : std::string(keyword.name) + ": " + err;
}

}  // namespace tpush::ssh_config
