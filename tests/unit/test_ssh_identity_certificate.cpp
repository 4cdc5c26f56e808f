// Certificate: what ssh-keygen -s writes is read field by field for users and
// hosts; the authority's signature is checked over exactly the signed bytes;
// validity and principals are said in words. (That tpush accepts and refuses
// host certificates as ssh does is checked against a real sshd and ssh in
// test_host_certificates.py.)
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "ssh_keys.h"
#include "tpush/ssh/identity/certificate.h"

namespace fs = std::filesystem;
using tpush::ssh::Certificate;
using tpush::test::CertDir;
using tpush::test::kJan1_2020;
using tpush::test::public_key_blob;

TEST_CASE("a host certificate of each key type: its kind, key, principals and authority") {
  CertDir dir;
  for (const char* type : {"ed25519", "rsa", "ecdsa"}) {
    CAPTURE(type);
    const fs::path key = dir.key(std::string("h_") + type, type);
    const auto cert = Certificate::parse(public_key_blob(dir.sign(key, "-h -n node1,node2")));
    REQUIRE(cert);
    CHECK(cert->kind == Certificate::Kind::host);
    CHECK(cert->key_blob == public_key_blob(key.string() + ".pub"));
    CHECK(cert->principals == std::vector<std::string>{"node1", "node2"});
    CHECK(cert->authority == public_key_blob(dir / "ca.pub"));
    CHECK(cert->critical_options.empty());
    CHECK(cert->signed_by_authority());
  }
}

TEST_CASE("a user certificate's critical options are read by name") {
  CertDir dir;
  const auto cert = Certificate::parse(
      public_key_blob(dir.sign(dir.key("u"), "-n root -O force-command=true -O source-address=127.0.0.1")));
  REQUIRE(cert);
  CHECK(cert->kind == Certificate::Kind::user);
  CHECK(cert->critical_options == std::vector<std::string>{"force-command", "source-address"});
}

TEST_CASE("a changed byte anywhere in the signed part, or another authority's signature, does not verify") {
  CertDir dir;
  const std::string blob = public_key_blob(dir.sign(dir.key("h"), "-h -n node1"));
  const auto cert = Certificate::parse(blob);
  REQUIRE(cert);
  for (std::size_t at : {std::size_t{60}, cert->signed_length / 2, cert->signed_length - 1}) {
    CAPTURE(at);
    std::string changed = blob;
    changed[at] = static_cast<char>(changed[at] ^ 0x01);
    const auto forged = Certificate::parse(changed);
    if (forged) CHECK_FALSE(forged->signed_by_authority());  // or it no longer parses at all
  }
  // The same certificate body, claimed for another authority's key.
  CertDir other;
  auto claimed = *cert;
  claimed.authority = public_key_blob(other / "ca.pub");
  CHECK_FALSE(claimed.signed_by_authority());
}

TEST_CASE("validity and principals in words: a host certificate needs principals, a user's may list none") {
  Certificate cert;
  cert.valid_after = kJan1_2020;
  cert.valid_before = kJan1_2020 + 86400;
  CHECK(cert.outside_validity(kJan1_2020) == "");
  CHECK(cert.outside_validity(kJan1_2020 + 86400) == "expired 2020-01-02 00:00:00 UTC");
  CHECK(cert.outside_validity(kJan1_2020 - 1) == "not valid before 2020-01-01 00:00:00 UTC");
  CHECK(cert.principal_problem("node1", /*required=*/false) == "");
  CHECK(cert.principal_problem("node1", /*required=*/true) == "it lists no principals");
  cert.principals = {"node1", "node2"};
  CHECK(cert.principal_problem("node2", true) == "");
  CHECK(cert.principal_problem("node3", true) == "its principals (node1, node2) do not include 'node3'");
}

TEST_CASE("plain keys and cut certificates are no certificates") {
  CertDir dir;
  const fs::path key = dir.key("k");
  const std::string blob = public_key_blob(dir.sign(key, "-h -n node1"));
  CHECK_FALSE(Certificate::parse(public_key_blob(key.string() + ".pub")));
  for (std::size_t cut : {std::size_t{10}, blob.size() / 2, blob.size() - 1})
    CHECK_FALSE(Certificate::parse(blob.substr(0, cut)));
  CHECK_FALSE(Certificate::parse(blob + "x"));
  CHECK(tpush::ssh::is_certificate_type("ssh-ed25519-cert-v01@openssh.com"));
  CHECK_FALSE(tpush::ssh::is_certificate_type("ssh-ed25519"));
}
