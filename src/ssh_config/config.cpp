#include "tpush/ssh_config/config.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>

#include "tpush/util/pattern.h"
#include "tpush/ssh_config/match.h"
#include "tpush/ssh_config/parse.h"
#include "tpush/ssh_config/tokens.h"
#include "tpush/util/error.h"
#include "tpush/util/string.h"

namespace tpush::ssh_config {

namespace {

constexpr std::size_t kMaxIdentityFiles = 100;   // SSH_MAX_IDENTITY_FILES, SSH_MAX_CERTIFICATE_FILES
constexpr std::size_t kMaxKnownHostsFiles = 32;  // SSH_MAX_HOSTS_FILES
constexpr uint16_t kDefaultPort = 22;

using util::iequals;

int socket_family(const ConfigField<AddressFamily>& family) {
  if (!family.value) return AF_UNSPEC;
  switch (*family.value) {
    case AddressFamily::inet: return AF_INET;
    case AddressFamily::inet6: return AF_INET6;
    case AddressFamily::any: break;
  }
  return AF_UNSPEC;
}

// The one address `name` spells, formatted by getnameinfo; nullopt when it
// is no single numeric address.
std::optional<std::string> numeric_address(const std::string& name, int family) {
  addrinfo hints{};
  hints.ai_family = family;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  if (getaddrinfo(name.c_str(), "22", &hints, &res) != 0 || res == nullptr) return std::nullopt;
  std::optional<std::string> out;
  char text[NI_MAXHOST];
  if (res->ai_next == nullptr &&
      getnameinfo(res->ai_addr, res->ai_addrlen, text, sizeof text, nullptr, 0, NI_NUMERICHOST) == 0)
    out = text;
  freeaddrinfo(res);
  return out;
}

// Whether getaddrinfo(AI_NUMERICHOST) could take `name` for an address: an
// IPv6 one holds ':' (a zone follows '%'); an IPv4 one (inet_aton's forms, which
// glibc takes whole: "127.1", "0x7f.1", octal) holds only digits, hex digits, 'x'
// and dots. Most host names fail this at their first letter past 'f', and skip
// the C library's lookup machinery.
bool may_be_numeric(const std::string& name) {
  if (name.find_first_of("%:") != std::string::npos) return true;
  return name.find_first_not_of("0123456789abcdefABCDEFxX.") == std::string::npos;
}

// ssh.c: names are lowercased; addresses keep their case but are rewritten
// in canonical form ("127.1" -> "127.0.0.1").
std::string final_host_name(const std::string& name, int family) {
  const bool looks_like_address = name.find_first_of("%:") != std::string::npos ||
                                  name.find_first_not_of("0123456789.") == std::string::npos;
  const std::optional<std::string> address =
      may_be_numeric(name) ? numeric_address(name, family) : std::nullopt;
  if (!looks_like_address && !address) return util::ascii_lowercase(name);
  return address && !iequals(*address, name) ? *address : name;
}

ConfigOrigin origin_of(const ParsedConfig& parsed, const ConfigDirective& d) {
  if (d.source == 0) return ConfigOrigin{ConfigOrigin::Kind::command_line, "-o", d.line};
  return ConfigOrigin{ConfigOrigin::Kind::file, parsed.sources[d.source], d.line};
}

// The first obtained value wins; the value and its origin are made only then
// (most lines a host's walk meets set what an earlier one set already).
template <typename T, typename V>
void obtain(ConfigField<T>& field, const V& value, const ParsedConfig& parsed, const ConfigDirective& d) {
  if (field.value) return;
  field.value = T(value);
  field.origin = origin_of(parsed, d);
}

// One host's walk over the parsed lines, then the expansions.
class Resolver {
 public:
  Resolver(const ParsedConfig& parsed, const SshConfig::Local& local, const HostQuery& query)
      : parsed_(parsed), local_(local), home_(local.home), local_user_(local.user), query_(query) {
    out_.host = query.host;
    if (query.user) out_.user = {*query.user, {ConfigOrigin::Kind::given, query.user_from, 0}};
    if (query.port) out_.port = {*query.port, {ConfigOrigin::Kind::given, query.port_from, 0}};
  }

  HostConfig run() {
    walk();
    finish();
    return std::move(out_);
  }

  // SshConfig::sharing_key: the walk alone, noting which Host and Match lines
  // apply and whether finish() would use the host for more than `host`.
  std::optional<std::string> sharing_key() {
    probe_ = true;
    walk();
    if (host_dependent_ || !out_.errors.empty() || !valid_command_line_host(query_.host) ||
        (query_.user && !valid_command_line_user(*query_.user)))
      return std::nullopt;
    // What the query gave goes in the HostConfig too.
    std::string& key = key_;
    key += '\0';
    if (query_.user) key += *query_.user + '\0' + query_.user_from;
    key += '\0';
    if (query_.port) key += std::to_string(*query_.port) + '\0' + query_.port_from;
    return std::move(key);
  }

 private:
  std::string where(const ConfigDirective& d) const { return origin_of(parsed_, d).to_string(); }
  static std::string where(const ConfigOrigin& o) { return o.to_string(); }

  void walk() {
    bool active = true, never = false;
    std::vector<std::pair<bool, bool>> includes;
    for (const ConfigDirective& d : parsed_.directives) {
      switch (d.kind) {
        case ConfigDirective::Kind::file_start:
          active = true, never = false;
          includes.clear();
          break;
        case ConfigDirective::Kind::include_start:
          includes.emplace_back(active, never);
          never = never || !active;
          break;
        case ConfigDirective::Kind::include_end:
          std::tie(active, never) = includes.back();
          includes.pop_back();
          break;
        case ConfigDirective::Kind::host:
          active = !never && host_line_applies(d.patterns, query_.host);
          if (probe_) key_ += active ? '1' : '0';
          break;
        case ConfigDirective::Kind::match:
          active = !never && !d.never && match_applies(d);
          if (probe_) key_ += active ? '1' : '0';
          break;
        case ConfigDirective::Kind::unknown:
          if (!ignore_unknown_ ||
              util::pattern_list_match(d.value.text, *ignore_unknown_, true) != util::PatternListMatch::positive)
            out_.errors.push_back(where(d) + ": " + unknown_keyword_message(d.value.text));
          break;
        case ConfigDirective::Kind::set:
          if (active && probe_) probe(d);
          else if (active) apply(d);
          break;
      }
    }
  }

  bool match_applies(const ConfigDirective& d) {
    std::string host = query_.host;
    if (out_.hostname.value) {
      TokenTable tokens;
      tokens.set('h', query_.host);
      // A bad token is reported once, by finish().
      if (!expand_tokens(*out_.hostname.value, kHostNameTokens, tokens, false, host).empty())
        host = *out_.hostname.value;
    }
    const MatchSubject subject{host, query_.host, out_.user.value ? *out_.user.value : local_user_, local_user_};
    return match_line_applies(d.criteria, subject);
  }

  // In a probe: what Match lines and IgnoreUnknown look at, and whether a
  // value finish() expands could take something of the host (%h, %n, %k, %C:
  // any '%' counts), or a ProxyJump could end at the host itself (ssh refuses
  // that, for that host only).
  void probe(const ConfigDirective& d) {
    const ConfigValue& v = d.value;
    const auto has_token = [](const std::string& text) { return text.find('%') != std::string::npos; };
    switch (d.key) {
      case ConfigKey::hostname:
      case ConfigKey::identity_file:
      case ConfigKey::certificate_file:
      case ConfigKey::identity_agent:
      case ConfigKey::proxy_command: host_dependent_ = host_dependent_ || has_token(v.text); break;
      case ConfigKey::user_known_hosts_file:
        host_dependent_ = host_dependent_ || std::any_of(v.list.begin(), v.list.end(), has_token);
        break;
      case ConfigKey::proxy_jump:
        if (!v.jump.none && !v.jump.hops.empty())
          host_dependent_ =
              host_dependent_ || may_be_numeric(query_.host) || iequals(v.jump.hops.back().host, query_.host);
        break;
      default: break;
    }
    switch (d.key) {
      case ConfigKey::hostname:
      case ConfigKey::user:
      case ConfigKey::ignore_unknown: return apply(d);
      default: return;
    }
  }

  void apply(const ConfigDirective& d) {
    const ConfigValue& v = d.value;
    const auto obtain = [&](auto& field, const auto& value) { ssh_config::obtain(field, value, parsed_, d); };
    switch (d.key) {
      case ConfigKey::hostname: return obtain(out_.hostname, v.text);
      case ConfigKey::user: return obtain(out_.user, v.text);
      case ConfigKey::port: return obtain(out_.port, static_cast<uint16_t>(v.number));
      case ConfigKey::identity_file: return add_key_file(out_.identity_files, identity_user_scope_, "IdentityFile", d);
      case ConfigKey::certificate_file:
        return add_key_file(out_.certificate_files, certificate_user_scope_, "CertificateFile", d);
      case ConfigKey::identities_only: return obtain(out_.identities_only, v.number != 0);
      case ConfigKey::batch_mode: return obtain(out_.batch_mode, v.number != 0);
      case ConfigKey::identity_agent: return obtain(out_.identity_agent, v.text);
      case ConfigKey::forward_agent:
        return obtain(out_.forward_agent, v.text.empty() ? std::string(v.number ? "yes" : "no") : v.text);
      case ConfigKey::host_key_alias: return obtain(out_.host_key_alias, v.text);
      // As Debian's ssh (OpenSSH 10.3's rules): ProxyJump hosts also take
      // the ProxyCommand slot, so whichever comes first wins; ProxyJump none
      // only stops later ProxyJumps.
      case ConfigKey::proxy_jump:
        if (v.jump.none) return obtain(jump_, v.jump);
        if (jump_.value || proxy_command_.value) return;
        obtain(jump_, v.jump);
        obtain(proxy_command_, std::string("none"));
        return;
      case ConfigKey::proxy_command: return obtain(proxy_command_, v.text);
      case ConfigKey::connect_timeout:
        if (v.number >= 0) obtain(out_.connect_timeout, v.number);  // `none` leaves it unset
        return;
      case ConfigKey::server_alive_interval:
        if (v.number >= 0) obtain(out_.server_alive_interval, v.number);
        return;
      case ConfigKey::server_alive_count_max: return obtain(out_.server_alive_count_max, v.number);
      case ConfigKey::connection_attempts: return obtain(out_.connection_attempts, v.number);
      case ConfigKey::strict_host_key_checking:
        return obtain(out_.strict_host_key_checking, static_cast<StrictHostKeyChecking>(v.number));
      case ConfigKey::address_family:
        return obtain(out_.address_family, static_cast<AddressFamily>(v.number));
      case ConfigKey::user_known_hosts_file: return add_known_hosts(out_.user_known_hosts_files, d);
      case ConfigKey::global_known_hosts_file: return add_known_hosts(out_.global_known_hosts_files, d);
      case ConfigKey::ignore_unknown:
        if (!ignore_unknown_) ignore_unknown_ = v.text;
        return;
      default: return;
    }
  }

  // IdentityFile and CertificateFile add up, to OpenSSH's limit of each.
  void add_key_file(std::vector<IdentityFileEntry>& files, std::vector<bool>& user_scope, const char* keyword,
                    const ConfigDirective& d) {
    if (files.size() >= kMaxIdentityFiles) {
      out_.errors.push_back(where(d) + ": " + keyword + ": more than " + std::to_string(kMaxIdentityFiles) +
                            " files apply to this host; remove some");
      return;
    }
    // OpenSSH drops a repeat of the same text from the same kind of file.
    for (std::size_t i = 0; i < files.size(); ++i)
      if (user_scope[i] == d.user_scope && files[i].written == d.value.text) return;
    files.push_back(IdentityFileEntry{"", d.value.text, origin_of(parsed_, d)});
    user_scope.push_back(d.user_scope);
  }

  void add_known_hosts(ConfigField<std::vector<std::string>>& field, const ConfigDirective& d) {
    if (field.value || d.value.list.empty()) return;  // one line gives the whole list
    if (d.value.list.size() > kMaxKnownHostsFiles) {
      out_.errors.push_back(where(d) + ": more than " + std::to_string(kMaxKnownHostsFiles) +
                            " known hosts files on one line; remove some");
      return;
    }
    field.value = d.value.list;
    field.origin = origin_of(parsed_, d);
  }

  // Expands `text` (~ first when `tilde`; %tokens unless `percent` is
  // false); on error records it, with where the value came from, and
  // returns the text as written.
  std::string expand(const std::string& text, std::string_view allowed, bool tilde, bool dollar,
                     const std::string& keyword, const ConfigOrigin& origin, bool percent = true) {
    std::string path = text, out;
    std::string err = tilde ? expand_tilde(text, home_, path) : "";
    if (err.empty() && !percent) return path;
    if (err.empty() && !hash_set_ && allowed.find('C') != std::string_view::npos &&
        path.find("%C") != std::string::npos)
      set_hash();
    if (err.empty()) err = expand_tokens(path, allowed, tokens_, dollar, out);
    if (err.empty()) return out;
    out_.errors.push_back(where(origin) + ": " + keyword + " \"" + text + "\": " + err);
    return text;
  }

  void settle_proxy();
  void finish();
  void check_query();
  void set_tokens(const std::string& host);
  void set_hash();
  void expand_paths();
  void check_jump_loop();

  const ParsedConfig& parsed_;
  const SshConfig::Local& local_;
  const std::string& home_;
  const std::string& local_user_;
  const HostQuery& query_;
  HostConfig out_;
  std::optional<std::string> ignore_unknown_;
  ConfigField<ProxyJumpValue> jump_;
  ConfigField<std::string> proxy_command_;
  std::vector<bool> identity_user_scope_, certificate_user_scope_;
  TokenTable tokens_;
  bool hash_set_ = false;  // %C, a SHA-1, is made only for a value that uses it
  bool probe_ = false;     // sharing_key(): walk only
  bool host_dependent_ = false;
  std::string key_;        // a probe's '1' or '0' per Host and Match line
};

// The proxy from what ProxyJump and ProxyCommand obtained.
void Resolver::settle_proxy() {
  ProxySetting proxy;
  if (jump_.value && !jump_.value->none) {
    proxy.kind = ProxySetting::Kind::jump;
    proxy.jump = *jump_.value;
    out_.proxy = {std::move(proxy), jump_.origin};
  } else if (proxy_command_.value) {
    proxy.kind = iequals(*proxy_command_.value, "none") ? ProxySetting::Kind::none : ProxySetting::Kind::command;
    proxy.command_written = *proxy_command_.value;
    out_.proxy = {std::move(proxy), proxy_command_.origin};
  } else if (jump_.value) {
    proxy.jump = *jump_.value;
    out_.proxy = {std::move(proxy), jump_.origin};
  }
}

void Resolver::finish() {
  settle_proxy();
  check_query();
  const int family = socket_family(out_.address_family);
  if (out_.hostname.value) {
    TokenTable host_token;
    host_token.set('h', query_.host);
    std::string expanded;
    if (std::string err = expand_tokens(*out_.hostname.value, kHostNameTokens, host_token, false, expanded);
        !err.empty()) {
      out_.errors.push_back(where(out_.hostname.origin) + ": HostName \"" + *out_.hostname.value + "\": " + err);
      expanded = *out_.hostname.value;
    }
    out_.hostname.value = final_host_name(expanded, family);
  }
  if (out_.host_key_alias.value) out_.host_key_alias.value = util::ascii_lowercase(*out_.host_key_alias.value);
  set_tokens(out_.hostname.value ? *out_.hostname.value : final_host_name(query_.host, family));
  expand_paths();
  if (out_.connection_attempts.value && *out_.connection_attempts.value <= 0)
    out_.errors.push_back(where(out_.connection_attempts.origin) +
                          ": ConnectionAttempts must be at least 1 (ssh refuses 0)");
  check_jump_loop();
}

// What ssh checks on its command line, since it ends up in %-tokens.
void Resolver::check_query() {
  if (!valid_command_line_host(query_.host))
    out_.errors.push_back("host \"" + query_.host +
                          "\": ssh refuses host names with blanks, shell metacharacters "
                          "(' ` \" $ \\ ; & < > | ( ) { } ,) or a leading '-'");
  if (query_.user && !valid_command_line_user(*query_.user))
    out_.errors.push_back(query_.user_from + ": user \"" + *query_.user +
                          "\": ssh refuses user names with control characters, shell metacharacters or a "
                          "leading '-'");
}

// The tokens, with OpenSSH's defaults for what is unset.
void Resolver::set_tokens(const std::string& host) {
  const std::string port = std::to_string(out_.port.value ? *out_.port.value : kDefaultPort);
  const std::string user = out_.user.value ? *out_.user.value : local_user_;
  tokens_.set('L', local_.short_host);
  tokens_.set('i', std::to_string(getuid()));
  tokens_.set('k', out_.host_key_alias.value ? *out_.host_key_alias.value : query_.host);
  tokens_.set('l', local_.host);
  tokens_.set('n', query_.host);
  tokens_.set('p', port);
  tokens_.set('d', home_);
  tokens_.set('h', host);
  tokens_.set('r', user);
  tokens_.set('u', local_user_);
}

// %C, from the tokens set_tokens() set.
void Resolver::set_hash() {
  tokens_.set('C', connection_hash(local_.host, *tokens_.get('h'), *tokens_.get('p'), *tokens_.get('r')));
  hash_set_ = true;
}

// Each value expanded the way ssh expands it when it connects.
void Resolver::expand_paths() {
  for (IdentityFileEntry& id : out_.identity_files)
    if (!iequals(id.written, "none"))
      id.path = expand(id.written, kClientTokens, true, true, "IdentityFile", id.origin);
  for (IdentityFileEntry& cert : out_.certificate_files)
    cert.path = expand(cert.written, kClientTokens, true, true, "CertificateFile", cert.origin);
  if (out_.identity_agent.value)
    out_.identity_agent.value =
        expand(*out_.identity_agent.value, kClientTokens, true, true, "IdentityAgent", out_.identity_agent.origin);
  if (const auto& fa = out_.forward_agent.value; fa && *fa != "yes" && *fa != "no")
    out_.forward_agent.value = expand(*fa, kClientTokens, true, true, "ForwardAgent", out_.forward_agent.origin);
  if (auto& files = out_.user_known_hosts_files; files.value) {
    if (iequals(files.value->front(), "none")) files.value->clear();
    for (std::string& f : *files.value) f = expand(f, kClientTokens, true, true, "UserKnownHostsFile", files.origin);
  }
  if (auto& files = out_.global_known_hosts_files; files.value) {
    if (iequals(files.value->front(), "none")) files.value->clear();
    for (std::string& f : *files.value) f = expand(f, "", true, false, "GlobalKnownHostsFile", files.origin, false);
  }
  if (out_.proxy.value && out_.proxy.value->kind == ProxySetting::Kind::command) {
    ProxySetting& proxy = *out_.proxy.value;
    proxy.command =
        expand(proxy.command_written, kProxyCommandTokens, false, false, "ProxyCommand", out_.proxy.origin);
  }
}

// ssh refuses to jump through the host it is asked to reach.
void Resolver::check_jump_loop() {
  if (!out_.proxy.value || out_.proxy.value->kind != ProxySetting::Kind::jump) return;
  const JumpHop& hop = out_.proxy.value->jump.hops.back();
  const std::string& host = *tokens_.get('h');
  const std::string& user = *tokens_.get('r');
  const std::string jump_port = std::to_string(hop.port > 0 ? hop.port : kDefaultPort);
  if (hop.host == host && jump_port == *tokens_.get('p') && (hop.user.empty() ? user : hop.user) == user)
    out_.errors.push_back(where(out_.proxy.origin) + ": ProxyJump " + hop.host +
                          " is this host itself (a loop); exclude it from the block, e.g. \"Host * !" +
                          query_.host + "\"");
}

}  // namespace

std::string ConfigOrigin::to_string() const {
  switch (kind) {
    case Kind::file: return where + ":" + std::to_string(line);
    case Kind::command_line: return "-o";
    case Kind::given: return where;
    case Kind::openssh_default: return "default";
    case Kind::unset: break;
  }
  return "unset";
}

std::vector<ConfigFile> ssh_config_files(const std::filesystem::path& home,
                                         const std::optional<std::string>& f_option) {
  if (f_option) {
    if (iequals(*f_option, "none")) return {};
    return {ConfigFile{*f_option, ConfigScope::named}};
  }
  return {ConfigFile{home / ".ssh" / "config", ConfigScope::user},
          ConfigFile{"/etc/ssh/ssh_config", ConfigScope::system}};
}

SshConfig SshConfig::load(const SshConfigSources& sources) {
  SshConfig config;
  config.parsed_ = std::make_shared<const ParsedConfig>(parse_ssh_config(sources));
  const LocalHostNames names = local_host_names();
  config.local_ = Local{sources.home.string(), sources.local_user, names.full, names.short_name};
  return config;
}

SshConfig SshConfig::load_or_throw(const SshConfigSources& sources) {
  SshConfig config = load(sources);
  if (!config.errors().empty()) {
    std::string message = "ssh config: ";
    for (std::size_t i = 0; i < config.errors().size(); ++i) message += (i ? "\n  " : "") + config.errors()[i];
    throw UsageError(message);
  }
  return config;
}

const std::vector<std::string>& SshConfig::errors() const { return parsed_->errors; }
const std::vector<std::string>& SshConfig::warnings() const { return parsed_->warnings; }

HostConfig SshConfig::resolve(const HostQuery& query) const { return Resolver(*parsed_, local_, query).run(); }

std::optional<std::string> SshConfig::sharing_key(const HostQuery& query) const {
  return Resolver(*parsed_, local_, query).sharing_key();
}

HostConfig SshConfig::with_openssh_defaults(HostConfig config) const {
  const ConfigOrigin origin{ConfigOrigin::Kind::openssh_default, "", 0};
  const auto fill = [&](auto& field, auto value) {
    if (!field.value) field = {std::move(value), origin};
  };
  const auto in_home = [&](const std::string& relative) {
    std::string path;
    expand_tilde("~/" + relative, local_.home, path);
    return path;
  };
  fill(config.hostname, final_host_name(config.host, socket_family(config.address_family)));
  fill(config.user, local_.user);
  fill(config.port, kDefaultPort);
  if (config.identity_files.empty())
    for (const char* name : {"id_rsa", "id_ecdsa", "id_ecdsa_sk", "id_ed25519", "id_ed25519_sk", "id_xmss", "id_dsa"})
      config.identity_files.push_back(
          IdentityFileEntry{in_home(std::string(".ssh/") + name), std::string("~/.ssh/") + name, origin});
  fill(config.identities_only, false);
  fill(config.batch_mode, false);
  fill(config.strict_host_key_checking, StrictHostKeyChecking::ask);
  fill(config.server_alive_interval, *config.batch_mode.value ? 300 : 0);  // Debian: 300 in batch mode
  fill(config.server_alive_count_max, 3);
  fill(config.connection_attempts, 1);
  fill(config.forward_agent, std::string("no"));
  fill(config.address_family, AddressFamily::any);
  fill(config.user_known_hosts_files,
       std::vector<std::string>{in_home(".ssh/known_hosts"), in_home(".ssh/known_hosts2")});
  fill(config.global_known_hosts_files,
       std::vector<std::string>{"/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"});
  return config;
}

}  // namespace tpush::ssh_config
