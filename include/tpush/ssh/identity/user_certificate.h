// An OpenSSH user certificate (PROTOCOL.certkeys): a public key signed by a
// certificate authority the server trusts (sshd's TrustedUserCAKeys), offered
// in the key's place. Found beside a key as KEY-cert.pub, named by
// CertificateFile, or held by the agent; signed for by the certified key.
#pragma once

#include <cstdint>
#include <ctime>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tpush::ssh {

struct KeyFile;

struct UserCertificate {
  std::filesystem::path path;  // where it was read; empty for one the agent holds
  std::string text;            // "type base64 comment", as in the file
  std::string blob;            // the certificate in wire format, as offered
  std::string key_blob;        // the certified key, as its own .pub file holds it
  std::string key_id;
  std::vector<std::string> principals;  // empty: valid for any user
  std::uint64_t valid_after = 0;
  std::uint64_t valid_before = UINT64_MAX;
  // The key file that signs for it (Credentials pairs them); null when only
  // the agent may hold its key.
  const KeyFile* key = nullptr;

  // nullopt unless `blob` is a well-formed user certificate of a type tpush
  // can sign for (ed25519, ECDSA, RSA).
  static std::optional<UserCertificate> parse(std::string_view blob);

  // Why a server that trusts the certificate's authority still refuses it for
  // `user` at `now`, as far as the client can tell: "expired 2026-11-27
  // 10:00:00 UTC", "not valid before ...", "its principals (alice, bob) do not
  // include 'carol'". "" when nothing client-visible is wrong (the server
  // may not trust the authority, or the certificate was revoked).
  std::string unfit_for(std::string_view user, std::time_t now) const;
};

// The signature algorithm a certificate's algorithm signs with:
// "rsa-sha2-512-cert-v01@openssh.com" -> "rsa-sha2-512"; other names as they are.
std::string_view plain_signature_algorithm(std::string_view algorithm);

}  // namespace tpush::ssh
