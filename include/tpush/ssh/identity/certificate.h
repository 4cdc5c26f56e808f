// An OpenSSH certificate (PROTOCOL.certkeys): a public key, whom and when it
// is for, signed by a certificate authority's key. Users offer them to log in
// (user_certificate.h); hosts offer them in the key exchange, checked against
// known_hosts' @cert-authority lines (host_key_policy.h).
#pragma once

#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tpush::ssh {

struct Certificate {
  enum class Kind : std::uint32_t { user = 1, host = 2 };  // SSH2_CERT_TYPE_*

  std::string blob;      // the certificate in wire format, as offered
  std::string key_blob;  // the certified key, as its own .pub file holds it
  Kind kind = Kind::user;
  std::string key_id;
  std::vector<std::string> principals;  // empty: any user (a host certificate needs some)
  std::uint64_t valid_after = 0;
  std::uint64_t valid_before = UINT64_MAX;
  std::vector<std::string> critical_options;  // their names
  std::string authority;                      // the authority's public key blob
  std::string signature;                      // its signature over blob's first signed_length bytes
  std::size_t signed_length = 0;

  // nullopt unless `blob` is a well-formed certificate of an ed25519, ECDSA or
  // RSA key.
  static std::optional<Certificate> parse(std::string_view blob);

  // True when its authority's key signed it (SHA-1 RSA signatures refused,
  // as OpenSSH's CASignatureAlgorithms does by default).
  bool signed_by_authority() const;

  // "expired 2026-11-27 10:00:00 UTC" or "not valid before ..." at `now`; "" within.
  std::string outside_validity(std::time_t now) const;

  // "its principals (a, b) do not include 'name'" (or "it lists no principals"
  // when `required`); "" when `name` is one of them, or none are listed and
  // none are `required`.
  std::string principal_problem(std::string_view name, bool required) const;
};

// The signature algorithm a certificate's algorithm signs with:
// "rsa-sha2-512-cert-v01@openssh.com" -> "rsa-sha2-512"; other names as they are.
std::string_view plain_signature_algorithm(std::string_view algorithm);

// True for a key blob or algorithm name of a certificate ("...-cert-v01@openssh.com").
bool is_certificate_type(std::string_view type);

}  // namespace tpush::ssh
