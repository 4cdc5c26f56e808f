#include "tpush/ssh_config/keywords.h"

#include "tpush/util/string.h"

namespace tpush::ssh_config {

namespace {

using K = ConfigKey;
using V = ValueKind;

// Names as the manual spells them; lookups lowercase them.
constexpr KeywordInfo kKeywords[] = {
    {"Host", K::host, V::structure},
    {"Match", K::match, V::structure},
    {"Include", K::include, V::structure},
    // What tpush resolves per host.
    {"HostName", K::hostname, V::text},
    {"User", K::user, V::text},
    {"Port", K::port, V::port},
    {"IdentityFile", K::identity_file, V::text},
    {"IdentityFile2", K::identity_file, V::text},  // obsolete alias
    {"CertificateFile", K::certificate_file, V::text},
    {"IdentitiesOnly", K::identities_only, V::flag},
    {"IdentityAgent", K::identity_agent, V::agent_socket},
    {"ProxyJump", K::proxy_jump, V::proxy_jump},
    {"ProxyCommand", K::proxy_command, V::command},
    {"ConnectTimeout", K::connect_timeout, V::time},
    {"ServerAliveInterval", K::server_alive_interval, V::time},
    {"ProtocolKeepAlives", K::server_alive_interval, V::time},  // Debian alias
    {"SetupTimeOut", K::server_alive_interval, V::time},        // Debian alias
    {"ServerAliveCountMax", K::server_alive_count_max, V::integer},
    {"StrictHostKeyChecking", K::strict_host_key_checking, V::strict_host_key},
    {"UserKnownHostsFile", K::user_known_hosts_file, V::file_list},
    {"GlobalKnownHostsFile", K::global_known_hosts_file, V::file_list},
    {"HostKeyAlias", K::host_key_alias, V::text},
    {"AddressFamily", K::address_family, V::address_family},
    {"ConnectionAttempts", K::connection_attempts, V::integer},
    {"BatchMode", K::batch_mode, V::flag},
    {"IgnoreUnknown", K::ignore_unknown, V::text},
    {"CanonicalizeHostname", K::canonicalize_hostname, V::canonicalize},
    // Known, checked, ignored.
    {"AddKeysToAgent", K::other, V::add_keys},
    {"BindAddress", K::other, V::text},
    {"BindInterface", K::other, V::text},
    {"CanonicalDomains", K::other, V::domain_list},
    {"CanonicalizeFallbackLocal", K::other, V::flag},
    {"CanonicalizeMaxDots", K::other, V::integer},
    {"CanonicalizePermittedCNAMEs", K::other, V::cname_rules},
    {"CASignatureAlgorithms", K::other, V::algorithms},
    {"ChallengeResponseAuthentication", K::other, V::flag},  // alias
    {"CheckHostIP", K::other, V::flag},
    {"Ciphers", K::other, V::algorithms},
    {"ClearAllForwardings", K::other, V::flag},
    {"Compression", K::other, V::compression},
    {"ControlMaster", K::other, V::control_master},
    {"ControlPath", K::other, V::text},
    {"ControlPersist", K::other, V::control_persist},
    {"DSAAuthentication", K::other, V::pubkey_auth},  // alias of PubkeyAuthentication
    {"DynamicForward", K::other, V::dynamic_forward},
    {"EnableEscapeCommandline", K::other, V::flag},
    {"EnableSSHKeysign", K::other, V::flag},
    {"EscapeChar", K::other, V::escape_char},
    {"ExitOnForwardFailure", K::other, V::flag},
    {"FingerprintHash", K::other, V::digest},
    {"ForkAfterAuthentication", K::other, V::flag},
    {"ForwardAgent", K::forward_agent, V::forward_agent},
    {"ForwardX11", K::other, V::flag},
    {"ForwardX11Timeout", K::other, V::time},
    {"ForwardX11Trusted", K::other, V::flag},
    {"GatewayPorts", K::other, V::flag},
    {"GSSAPIAuthentication", K::other, V::flag},
    {"GSSAPIDelegateCredentials", K::other, V::flag},
    {"GSSAPIClientIdentity", K::other, V::text},         // Debian
    {"GSSAPIKeyExchange", K::other, V::flag},            // Debian
    {"GSSAPIKexAlgorithms", K::other, V::algorithms},    // Debian
    {"GSSAPIRenewalForcesRekey", K::other, V::flag},     // Debian
    {"GSSAPIServerIdentity", K::other, V::text},         // Debian
    {"GSSAPITrustDNS", K::other, V::flag},               // Debian
    {"HashKnownHosts", K::other, V::flag},
    {"HostbasedAcceptedAlgorithms", K::other, V::algorithms},
    {"HostbasedAuthentication", K::other, V::flag},
    {"HostbasedKeyTypes", K::other, V::algorithms},  // obsolete alias
    {"HostKeyAlgorithms", K::other, V::algorithms},
    {"IPQoS", K::other, V::ip_qos},
    {"KbdInteractiveAuthentication", K::other, V::flag},
    {"KbdInteractiveDevices", K::other, V::text},
    {"KeepAlive", K::other, V::flag},  // obsolete alias of TCPKeepAlive
    {"KexAlgorithms", K::other, V::algorithms},
    {"KnownHostsCommand", K::other, V::command},
    {"LocalCommand", K::other, V::command},
    {"LocalForward", K::other, V::local_forward},
    {"LogLevel", K::other, V::log_level},
    {"LogVerbose", K::other, V::word_list},
    {"MACs", K::other, V::algorithms},
    {"NoHostAuthenticationForLocalhost", K::other, V::flag},
    {"NumberOfPasswordPrompts", K::other, V::integer},
    {"PasswordAuthentication", K::other, V::flag},
    {"PermitLocalCommand", K::other, V::flag},
    {"PermitRemoteOpen", K::other, V::permit_open},
    {"PKCS11Provider", K::other, V::text},
    {"PreferredAuthentications", K::other, V::text},
    {"ProxyUseFdpass", K::other, V::flag},
    {"PubkeyAcceptedAlgorithms", K::other, V::algorithms},
    {"PubkeyAcceptedKeyTypes", K::other, V::algorithms},  // obsolete alias
    {"PubkeyAuthentication", K::other, V::pubkey_auth},
    {"RekeyLimit", K::other, V::rekey_limit},
    {"RemoteCommand", K::other, V::command},
    {"RemoteForward", K::other, V::remote_forward},
    {"RequestTTY", K::other, V::request_tty},
    {"RequiredRSASize", K::other, V::integer},
    {"RevokedHostKeys", K::other, V::text},
    {"SecurityKeyProvider", K::other, V::text},
    {"SendEnv", K::other, V::send_env},
    {"SessionType", K::other, V::session_type},
    {"SetEnv", K::other, V::set_env},
    {"SkeyAuthentication", K::other, V::flag},  // alias
    {"SmartcardDevice", K::other, V::text},     // alias of PKCS11Provider
    {"StdinNull", K::other, V::flag},
    {"StreamLocalBindMask", K::other, V::octal_mask},
    {"StreamLocalBindUnlink", K::other, V::flag},
    {"SyslogFacility", K::other, V::log_facility},
    {"TCPKeepAlive", K::other, V::flag},
    {"TISAuthentication", K::other, V::flag},  // alias
    {"Tunnel", K::other, V::tunnel},
    {"TunnelDevice", K::other, V::tunnel_device},
    {"UpdateHostKeys", K::other, V::yes_no_ask},
    {"VerifyHostKeyDNS", K::other, V::yes_no_ask},
    {"VisualHostKey", K::other, V::flag},
    {"XAuthLocation", K::other, V::text},
    // Deprecated (silently ignored) and unsupported (OpenSSH says so).
    {"Protocol", K::other, V::anything},
    {"Cipher", K::other, V::anything},
    {"FallBackToRsh", K::other, V::anything},
    {"GlobalKnownHostsFile2", K::other, V::anything},
    {"RhostsAuthentication", K::other, V::anything},
    {"UserKnownHostsFile2", K::other, V::anything},
    {"UseRoaming", K::other, V::anything},
    {"UseRsh", K::other, V::anything},
    {"UsePrivilegedPort", K::other, V::anything},
    {"AFSTokenPassing", K::unsupported, V::anything},
    {"KerberosAuthentication", K::unsupported, V::anything},
    {"KerberosTGTPassing", K::unsupported, V::anything},
    {"RSAAuthentication", K::unsupported, V::anything},
    {"RhostsRSAAuthentication", K::unsupported, V::anything},
    {"CompressionLevel", K::unsupported, V::anything},
};

}  // namespace

const KeywordInfo* find_keyword(std::string_view name) {
  for (const KeywordInfo& kw : kKeywords)
    if (util::iequals(kw.name, name)) return &kw;
  return nullptr;
}

std::string closest_keyword(std::string_view lowercase_name) {
  std::string best;
  std::size_t best_distance = lowercase_name.size() >= 12 ? 4 : 3;
  for (const KeywordInfo& kw : kKeywords) {
    if (kw.kind == ValueKind::anything) continue;  // never suggest a deprecated keyword
    const std::size_t d = util::edit_distance(lowercase_name, util::ascii_lowercase(kw.name));
    if (d < best_distance) best_distance = d, best = std::string(kw.name);
  }
  return best;
}

std::string unknown_keyword_message(std::string_view lowercase_name) {
  const std::string name(lowercase_name);
  std::string msg = "unknown keyword \"" + name + "\"";
  if (const std::string close = closest_keyword(lowercase_name); !close.empty())
    msg += " (did you mean \"" + close + "\"?)";
  return msg + "; ssh refuses it too. If a newer ssh knows it, write \"IgnoreUnknown " + name +
         "\" above this line";
}

}  // namespace tpush::ssh_config
