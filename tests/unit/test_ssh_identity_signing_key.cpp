// SigningKey: keys written by ssh-keygen in each format are decoded to the same
// public blob as their .pub file; what tpush does not decode is left to libssh2.
// (That the signatures are right is checked by a real sshd in test_auth.py.)
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>

#include "ssh_keys.h"
#include "test_support.h"
#include "tpush/ssh/identity/signing_key.h"
#include "tpush/ssh/wire.h"
#include "tpush/util/base64.h"

namespace fs = std::filesystem;
using tpush::ssh::SigningKey;
using tpush::test::have_ssh_keygen;
using tpush::test::read_file;

using tpush::test::KeyDir;
using tpush::test::userauth_request;

namespace {

// KEY.pub's blob.
std::string pub_blob(const fs::path& key) { return tpush::test::public_key_blob(key.string() + ".pub"); }

}  // namespace

TEST_CASE("keys in every format ssh-keygen writes decode to their .pub blob and sign") {
  if (!have_ssh_keygen()) {
    MESSAGE("ssh-keygen not installed: skipped");
    return;
  }
  KeyDir d;
  struct Case {
    const char* name;
    const char* args;
    const char* algorithm;  // one the key signs with
    std::size_t min_signature;
  };
  const Case cases[] = {
      {"ed25519", "-t ed25519 -N ''", "ssh-ed25519", 64},
      {"ecdsa256", "-t ecdsa -b 256 -N ''", "ecdsa-sha2-nistp256", 16},
      {"ecdsa384", "-t ecdsa -b 384 -N ''", "ecdsa-sha2-nistp384", 16},
      {"ecdsa521", "-t ecdsa -b 521 -N ''", "ecdsa-sha2-nistp521", 16},
      {"rsa-openssh", "-t rsa -b 2048 -N ''", "rsa-sha2-512", 256},
      {"rsa-pem", "-t rsa -b 2048 -m PEM -N ''", "rsa-sha2-256", 256},
      {"rsa-pkcs8", "-t rsa -b 2048 -m PKCS8 -N ''", "ssh-rsa", 256},
      {"ecdsa-pem", "-t ecdsa -b 256 -m PEM -N ''", "ecdsa-sha2-nistp256", 16},
      {"ecdsa-pkcs8", "-t ecdsa -b 384 -m PKCS8 -N ''", "ecdsa-sha2-nistp384", 16},
      {"rsa-pem-encrypted", "-t rsa -b 2048 -m PEM -N 'pass phrase'", "rsa-sha2-256", 256},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const fs::path key = d.generate(c.name, c.args);
    const auto parsed = SigningKey::parse(read_file(key), "pass phrase");
    REQUIRE(parsed);
    CHECK(parsed->public_blob() == pub_blob(key));
    const auto sig = parsed->sign_userauth_request(userauth_request(c.algorithm, parsed->public_blob()));
    REQUIRE(sig);
    CHECK(sig->size() >= c.min_signature);
    // An algorithm of another key type is refused, not signed with the wrong hash.
    const char* other = std::string(c.algorithm) == "ssh-ed25519" ? "rsa-sha2-256" : "ssh-ed25519";
    CHECK_FALSE(parsed->sign_userauth_request(userauth_request(other, parsed->public_blob())));
  }
}

TEST_CASE("keys tpush cannot decode are left to libssh2") {
  if (!have_ssh_keygen()) {
    MESSAGE("ssh-keygen not installed: skipped");
    return;
  }
  KeyDir d;
  // An encrypted OpenSSH-format key needs bcrypt_pbkdf, which libssh2 has.
  CHECK_FALSE(SigningKey::parse(read_file(d.generate("enc", "-t ed25519 -N secret")), "secret"));
  // An encrypted PEM key with the wrong passphrase (or none).
  const std::string pem = read_file(d.generate("enc-pem", "-t rsa -b 2048 -m PEM -N secret"));
  CHECK_FALSE(SigningKey::parse(pem, "wrong"));
  CHECK_FALSE(SigningKey::parse(pem, ""));
  CHECK(SigningKey::parse(pem, "secret"));
  // Not a key at all, or a truncated one.
  CHECK_FALSE(SigningKey::parse("", ""));
  CHECK_FALSE(SigningKey::parse("hello\n", ""));
  const std::string openssh = read_file(d.generate("ok", "-t ed25519 -N ''"));
  CHECK_FALSE(SigningKey::parse(openssh.substr(0, openssh.size() / 2) + "\n-----END OPENSSH PRIVATE KEY-----\n", ""));
}

TEST_CASE("a request that is not a userauth request is not signed") {
  if (!have_ssh_keygen()) {
    MESSAGE("ssh-keygen not installed: skipped");
    return;
  }
  KeyDir d;
  const auto key = SigningKey::parse(read_file(d.generate("k", "-t ed25519 -N ''")), "");
  REQUIRE(key);
  CHECK_FALSE(key->sign_userauth_request(""));
  CHECK_FALSE(key->sign_userauth_request(std::string(3, '\0')));
}

TEST_CASE("an OpenSSH key whose public half is not its private key's is refused (fuzz)") {
  if (!have_ssh_keygen()) {
    MESSAGE("ssh-keygen not installed: skipped");
    return;
  }
  KeyDir d;
  const fs::path key = d.generate("k", "-t ed25519 -N ''"), other = d.generate("other", "-t ed25519 -N ''");
  // The file again, with `public_blob` in place of its header's public key.
  const auto with_header_key = [&](const std::string& public_blob) {
    using namespace tpush::ssh::wire;
    const auto contents = tpush::ssh::openssh_key_contents(read_file(key));
    REQUIRE(contents);
    Reader r(*contents);
    std::string rebuilt("openssh-key-v1\0", 15);
    for (int i = 0; i < 3; ++i) put_string(rebuilt, *r.string());  // cipher, kdf, kdf options
    put_u32(rebuilt, *r.u32());
    r.string();
    put_string(rebuilt, public_blob);
    put_string(rebuilt, *r.string());  // the private section
    return "-----BEGIN OPENSSH PRIVATE KEY-----\n" + tpush::util::base64_encode(rebuilt) +
           "\n-----END OPENSSH PRIVATE KEY-----\n";
  };
  REQUIRE(SigningKey::parse(with_header_key(pub_blob(key)), ""));
  // Another key's public half: tpush would offer one key and sign with the other.
  CHECK_FALSE(SigningKey::parse(with_header_key(pub_blob(other)), ""));
  // What the fuzzer found: one byte of the header's key type name changed.
  std::string damaged = pub_blob(key);
  damaged[7] = '\x88';
  CHECK_FALSE(SigningKey::parse(with_header_key(damaged), ""));
}
