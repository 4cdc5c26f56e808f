// A client private key parsed once per run and used to sign the publickey
// authentication of every session.
//
// libssh2's own `userauth_publickey_frommemory` parses the key text twice per
// session (once to derive the public key, once to sign), and each parse first
// runs OpenSSL 3's PEM decoder machinery: that was ~40% of tpush's client CPU
// per worker. A SigningKey holds the decoded key (an EVP_PKEY) and its public
// blob, and signs through libssh2's sign callback instead.
//
// Understood: unencrypted OpenSSH-format keys (ssh-keygen's default) and PEM
// keys (PKCS#1, SEC1, PKCS#8; encrypted ones with their passphrase) of types
// ed25519, ecdsa-sha2-nistp256/384/521 and RSA. Anything else (an encrypted
// OpenSSH-format key needs bcrypt_pbkdf) is left to libssh2's own parser.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

typedef struct evp_pkey_st EVP_PKEY;

namespace tpush::ssh {

class SigningKey {
 public:
  // nullopt when the key text is in a format or of a type listed as not
  // understood above, or cannot be decrypted with `passphrase`.
  static std::optional<SigningKey> parse(std::string_view text, const std::string& passphrase);

  // The public key in SSH wire format ("string type, ..."), as in a .pub file.
  const std::string& public_blob() const { return public_blob_; }

  // Signs `data`, an SSH userauth request as libssh2 hands it to a sign
  // callback (RFC 4252 section 7); the signature algorithm named inside it
  // picks the hash (rsa-sha2-512, rsa-sha2-256, ssh-rsa, ...). Returns the
  // signature as that algorithm encodes it inside its "signature" string, or
  // nullopt when the request cannot be read or signing fails.
  std::optional<std::string> sign_userauth_request(std::string_view data) const;
  // Signs `data` as `algorithm` (one of the above, for this key's type).
  std::optional<std::string> sign(std::string_view algorithm, std::string_view data) const;

 private:
  enum class Type { ed25519, ecdsa, rsa };

  SigningKey(EVP_PKEY* key, Type type, std::string public_blob);

  std::shared_ptr<EVP_PKEY> key_;
  Type type_;
  std::string public_blob_;
};

// What an OpenSSH-format private key ("-----BEGIN OPENSSH PRIVATE KEY-----")
// holds after its "openssh-key-v1" magic, decoded: the cipher name comes first.
// nullopt for any other text.
std::optional<std::string> openssh_key_contents(std::string_view text);

}  // namespace tpush::ssh
