// UserCertificate: certificates ssh-keygen -s writes are read field by field;
// what a server would refuse that the client can see is said in words; and
// Credentials pairs each certificate with the key that signs for it. (That a
// server accepts the logins is checked by a real sshd in test_certificates.py.)
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "ssh_keys.h"
#include "test_support.h"
#include "tpush/ssh/identity/credentials.h"
#include "tpush/ssh/identity/signing_key.h"
#include "tpush/ssh/identity/user_certificate.h"
#include "tpush/util/error.h"

namespace fs = std::filesystem;
using tpush::ssh::Credentials;
using tpush::ssh::UserCertificate;
using tpush::test::CertDir;
using tpush::test::kJan1_2020;
using tpush::test::error_of;
using tpush::test::public_key_blob;
using tpush::test::read_file;

TEST_CASE("a certificate of each key type is read: its key, id, principals and validity") {
  CertDir dir;
  for (const char* type : {"ed25519", "rsa", "ecdsa"}) {
    CAPTURE(type);
    const fs::path key = dir.key(std::string("k_") + type, type);
    const auto cert = UserCertificate::parse(public_key_blob(dir.sign(key, "-n alice,bob -V 20200101Z:20200102Z")));
    REQUIRE(cert);
    CHECK(cert->key_blob == public_key_blob(key.string() + ".pub"));
    CHECK(cert->key_id == "the-id");
    CHECK(cert->principals == std::vector<std::string>{"alice", "bob"});
    CHECK(cert->valid_after == kJan1_2020);
    CHECK(cert->valid_before == kJan1_2020 + 86400);
  }
}

TEST_CASE("a host certificate, a plain key and a cut certificate are not user certificates") {
  CertDir dir;
  const fs::path key = dir.key("k");
  CertDir::keygen("-s '" + (dir / "ca").string() + "' -h -I host -n h '" + key.string() + ".pub'");
  CHECK_FALSE(UserCertificate::parse(public_key_blob(key.string() + "-cert.pub")));
  CHECK_FALSE(UserCertificate::parse(public_key_blob(key.string() + ".pub")));
  const std::string user_cert = public_key_blob(dir.sign(key));
  REQUIRE(UserCertificate::parse(user_cert));
  for (std::size_t cut : {std::size_t{10}, user_cert.size() / 2, user_cert.size() - 1})
    CHECK_FALSE(UserCertificate::parse(user_cert.substr(0, cut)));
  CHECK_FALSE(UserCertificate::parse(user_cert + "x"));
}

TEST_CASE("what a server would refuse is said: expired, not yet valid, another user's") {
  UserCertificate cert;
  cert.valid_after = kJan1_2020;
  cert.valid_before = kJan1_2020 + 86400;
  CHECK(cert.unfit_for("root", kJan1_2020 + 10) == "");
  CHECK(cert.unfit_for("root", kJan1_2020 + 86400) == "expired 2020-01-02 00:00:00 UTC");
  CHECK(cert.unfit_for("root", kJan1_2020 - 1) == "not valid before 2020-01-01 00:00:00 UTC");
  cert.principals = {"alice", "bob"};
  CHECK(cert.unfit_for("bob", kJan1_2020 + 10) == "");
  CHECK(cert.unfit_for("carol", kJan1_2020 + 10) == "its principals (alice, bob) do not include 'carol'");
  UserCertificate forever;  // ssh-keygen's default: valid always, for any user
  CHECK(forever.unfit_for("anyone", 4102444800) == "");
}

TEST_CASE("a certificate's login is signed as its key's") {
  CHECK(tpush::ssh::plain_signature_algorithm("ssh-ed25519-cert-v01@openssh.com") == "ssh-ed25519");
  CHECK(tpush::ssh::plain_signature_algorithm("rsa-sha2-512-cert-v01@openssh.com") == "rsa-sha2-512");
  CHECK(tpush::ssh::plain_signature_algorithm("ecdsa-sha2-nistp256-cert-v01@openssh.com") == "ecdsa-sha2-nistp256");
  CHECK(tpush::ssh::plain_signature_algorithm("ssh-ed25519") == "ssh-ed25519");

  CertDir dir;
  const fs::path key = dir.key("k");
  const auto signing = tpush::ssh::SigningKey::parse(read_file(key), "");
  REQUIRE(signing);
  const std::string request =
      tpush::test::userauth_request("ssh-ed25519-cert-v01@openssh.com", public_key_blob(dir.sign(key)));
  CHECK(signing->sign_userauth_request(request) == signing->sign("ssh-ed25519", request));
}

TEST_CASE("Credentials pair KEY-cert.pub with KEY, and a CertificateFile with the key it certifies") {
  CertDir dir;
  const fs::path a = dir.key("a"), b = dir.key("b");
  dir.sign(a);
  const fs::path apart = dir / "b.cert";
  fs::rename(dir.sign(b), apart);
  const Credentials c = Credentials::gather({a, b}, {}, {apart});
  REQUIRE(c.certificates.size() == 2);
  const auto* beside = c.find(a)->certificate;
  REQUIRE(beside);
  CHECK(beside->path == fs::path(a.string() + "-cert.pub"));
  CHECK(beside->key == c.find(a));
  CHECK(c.find(b)->certificate == nullptr);  // named, not beside it
  REQUIRE(c.find_certificate(apart));
  CHECK(c.find_certificate(apart)->key == c.find(b));
  CHECK(c.all().certificates == std::vector<const UserCertificate*>{beside});
}

TEST_CASE("a certificate that cannot be used is a usage error naming it and a fix") {
  CertDir dir;
  const fs::path a = dir.key("a"), other = dir.key("other");
  fs::rename(dir.sign(other), a.string() + "-cert.pub");
  std::string error = error_of<tpush::UsageError>([&] { Credentials::gather({a}, {}, {}); });
  CHECK(error.find("certificate " + a.string() + "-cert.pub certifies another key") == 0);
  CHECK(error.find("than " + a.string()) != std::string::npos);
  CHECK(error.find("ssh-keygen -s") != std::string::npos);
  fs::remove(a.string() + "-cert.pub");

  error = error_of<tpush::UsageError>([&] { Credentials::gather({a}, {}, {a.string() + ".pub"}); });
  CHECK(error == "CertificateFile " + a.string() + ".pub: not an OpenSSH user certificate of an ed25519, ECDSA or " +
                     "RSA key (make one with: ssh-keygen -s CA_KEY -I ID KEY.pub)");

  const fs::path cert = dir.sign(other);
  error = error_of<tpush::UsageError>([&] { Credentials::gather({a}, {}, {cert}); });
  CHECK(error.find("CertificateFile " + cert.string() + " certifies a key (ED25519 SHA256:") == 0);
  CHECK(error.find("that no identity file holds: name its private key with -i or IdentityFile") != std::string::npos);

  // A missing CertificateFile is passed over, as ssh passes over it.
  CHECK(Credentials::gather({a}, {}, {dir / "missing-cert.pub"}).certificates.empty());
}
