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

#include "tpush/ssh/identity/certificate.h"

namespace tpush::ssh {

struct KeyFile;

struct UserCertificate : Certificate {
  std::filesystem::path path;  // where it was read; empty for one the agent holds
  std::string text;            // "type base64 comment", as in the file
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

}  // namespace tpush::ssh
