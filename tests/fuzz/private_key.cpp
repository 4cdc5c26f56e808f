// Private key files: OpenSSH format ("openssh-key-v1") and PEM (PKCS#1, SEC1,
// PKCS#8), as SigningKey::parse reads them once per run.
// Invariants: a key that parses has a public blob naming a type tpush signs with,
// and signs a userauth request for that type.
#include "fuzz_support.h"
#include "tpush/ssh/identity/signing_key.h"
#include "tpush/ssh/wire.h"

using namespace tpush::ssh;

namespace {

// A userauth request as libssh2 hands it to the sign callback (RFC 4252 7).
std::string userauth_request(std::string_view algorithm, std::string_view blob) {
  std::string out;
  wire::put_string(out, std::string(32, 's'));
  out.push_back(50);  // SSH_MSG_USERAUTH_REQUEST
  wire::put_string(out, "user");
  wire::put_string(out, "ssh-connection");
  wire::put_string(out, "publickey");
  out.push_back(1);
  wire::put_string(out, algorithm);
  wire::put_string(out, blob);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = tpush::fuzz::as_text(data, size);
  openssh_key_contents(text);
  const std::optional<SigningKey> key = SigningKey::parse(text, "fuzz-passphrase");
  if (!key) return 0;
  const std::string type = wire::blob_type(key->public_blob());
  FUZZ_CHECK(type == "ssh-ed25519" || type == "ssh-rsa" || type.starts_with("ecdsa-sha2-nistp"));
  const std::string algorithm = type == "ssh-rsa" ? "rsa-sha2-512" : type;
  // OpenSSL may refuse a key that decoded but is not usable (a bad RSA key):
  // no signature then, but no crash either.
  key->sign_userauth_request(userauth_request(algorithm, key->public_blob()));
  return 0;
}
