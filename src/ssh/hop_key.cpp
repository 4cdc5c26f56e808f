#include "tpush/ssh/hop_key.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <memory>

#include "tpush/ssh/wire.h"
#include "tpush/util/base64.h"
#include "tpush/util/error.h"

namespace tpush::ssh {
namespace {

std::string bytes(const unsigned char* p, std::size_t n) { return std::string(reinterpret_cast<const char*>(p), n); }

// The body of an OpenSSH private key file ("openssh-key-v1"), unencrypted:
// cipher and kdf "none", one key, its public blob, then the private section
// (a repeated check word, the key, the comment, padded to 8 bytes).
std::string openssh_private_file(const std::string& public_blob, const std::string& pub,
                                 const std::string& seed, const std::string& comment) {
  unsigned char check[4];
  if (RAND_bytes(check, sizeof check) != 1) throw SetupError("cannot make a relay key: OpenSSL's random generator failed");
  std::string secret;
  secret.append(bytes(check, 4)).append(bytes(check, 4));
  wire::put_string(secret, "ssh-ed25519");
  wire::put_string(secret, pub);
  wire::put_string(secret, seed + pub);  // OpenSSH keeps the 32-byte seed followed by the public key
  wire::put_string(secret, comment);
  for (char pad = 1; secret.size() % 8 != 0; ++pad) secret += pad;

  std::string file("openssh-key-v1\0", 15);
  wire::put_string(file, "none");
  wire::put_string(file, "none");
  wire::put_string(file, "");
  wire::put_u32(file, 1);
  wire::put_string(file, public_blob);
  wire::put_string(file, secret);

  const std::string b64 = util::base64_encode(file);
  std::string text = "-----BEGIN OPENSSH PRIVATE KEY-----\n";
  for (std::size_t i = 0; i < b64.size(); i += 70) text.append(b64, i, 70).append("\n");
  return text + "-----END OPENSSH PRIVATE KEY-----\n";
}

}  // namespace

HopKey make_hop_key(const std::string& comment) {
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519"),
                                                          &EVP_PKEY_free);
  unsigned char seed[32], pub[32];
  std::size_t seed_len = sizeof seed, pub_len = sizeof pub;
  if (!key || EVP_PKEY_get_raw_private_key(key.get(), seed, &seed_len) != 1 ||
      EVP_PKEY_get_raw_public_key(key.get(), pub, &pub_len) != 1 || seed_len != 32 || pub_len != 32)
    throw SetupError("cannot make a relay key: OpenSSL could not generate an ed25519 key");
  std::string blob;
  wire::put_string(blob, "ssh-ed25519");
  wire::put_string(blob, bytes(pub, pub_len));
  HopKey out;
  out.private_text = openssh_private_file(blob, bytes(pub, pub_len), bytes(seed, seed_len), comment);
  out.public_line = "ssh-ed25519 " + util::base64_encode(blob) + " " + comment;
  OPENSSL_cleanse(seed, sizeof seed);
  return out;
}

}  // namespace tpush::ssh
