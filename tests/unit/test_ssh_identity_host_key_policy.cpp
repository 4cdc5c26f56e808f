// HostKeyPolicy with host certificates: a certificate is accepted only with
// its authority's valid signature, whatever the rest of it says; a refused
// one falls back to its key, the reason kept. (Against a real sshd and ssh:
// test_host_certificates.py.)
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "ssh_keys.h"
#include "tpush/ssh/identity/host_key_policy.h"
#include "tpush/ssh/wire.h"
#include "tpush/util/base64.h"

namespace fs = std::filesystem;
using tpush::ssh::HostKey;
using tpush::ssh::HostKeyIdentity;
using tpush::ssh::HostKeyMode;
using tpush::ssh::HostKeyPolicy;
using tpush::test::CertDir;
using tpush::test::public_key_blob;

namespace {

// known_hosts trusting the directory's "ca" for every host.
fs::path trusting(const CertDir& dir) {
  const fs::path known = dir / "known_hosts";
  std::ofstream(known) << "@cert-authority * ssh-ed25519 "
                       << tpush::util::base64_encode(public_key_blob(dir / "ca.pub")) << "\n";
  return known;
}

HostKey offered(const std::string& blob) { return {tpush::ssh::wire::blob_type(blob), blob}; }

}  // namespace

TEST_CASE("a host certificate is accepted for its principal, and a forged one falls back to its key") {
  CertDir dir;
  const std::string blob = public_key_blob(dir.sign(dir.key("h"), "-h -n node1"));
  HostKeyPolicy policy(HostKeyMode::yes, trusting(dir), {});
  const HostKeyIdentity node1{"node1", 22, {}, nullptr};
  CHECK(policy.wants_certificate(node1));
  CHECK(policy.verify(node1, offered(blob)).accepted);

  std::string forged = blob;
  forged[60] = static_cast<char>(forged[60] ^ 0x01);  // in the nonce: still well formed
  const auto verdict = policy.verify(node1, offered(forged));
  CHECK_FALSE(verdict.accepted);
  CHECK(verdict.reason.starts_with("host key unknown (ssh-ed25519 SHA256:"));
  CHECK(verdict.reason.ends_with("; its certificate was not accepted: its authority's signature does not verify"));
}

TEST_CASE("a valid host certificate whose own key is @revoked is refused, with no fallback") {
  CertDir dir;
  const fs::path key = dir.key("h");
  const std::string blob = public_key_blob(dir.sign(key, "-h -n node1"));
  const fs::path known = trusting(dir);
  std::ofstream(known, std::ios::app) << "@revoked * ssh-ed25519 "
                                      << tpush::util::base64_encode(public_key_blob(key.string() + ".pub")) << "\n";
  HostKeyPolicy policy(HostKeyMode::accept_new, known, {});
  const auto verdict = policy.verify({"node1", 22, {}, nullptr}, offered(blob));
  CHECK_FALSE(verdict.accepted);
  CHECK(verdict.reason.starts_with("host key revoked (ssh-ed25519 SHA256:"));
  CHECK(verdict.reason.ends_with(" is marked @revoked in " + known.string() + ":2)"));
}
