#include "tpush/ssh/library.h"

#include <libssh2.h>

#include <set>

#include "tpush/util/error.h"
#include "tpush/util/string.h"

namespace tpush::ssh {
namespace {

constexpr const char* kKex =
    "curve25519-sha256,curve25519-sha256@libssh.org,ecdh-sha2-nistp256,ecdh-sha2-nistp384,"
    "ecdh-sha2-nistp521,diffie-hellman-group16-sha512,diffie-hellman-group18-sha512,"
    "diffie-hellman-group14-sha256,diffie-hellman-group-exchange-sha256";
// The fastest first, for a forward's or a copy's bulk data, on both ends.
// tpush's own libssh2 (with scripts/patches/libssh2-transport-bulk-crypt.patch)
// hands OpenSSL a packet at a time, where AES-GCM runs on the CPU's AES
// instructions: about 5x less of tpush's CPU than chacha20-poly1305, which
// libssh2 computes in portable C (bench/RESULTS.md). chacha20-poly1305 stays
// behind AES-GCM with a system libssh2 too, where it would be the faster: an
// unpatched 1.11.1 spins for ever on a packet whose Poly1305 tag fails (one
// bit flipped on the wire; scripts/patches/libssh2-transport-crypt-failure.patch).
constexpr const char* kCiphers =
    "aes128-gcm@openssh.com,aes256-gcm@openssh.com,chacha20-poly1305@openssh.com,aes128-ctr,aes192-ctr,aes256-ctr";
constexpr const char* kMacs =
    "hmac-sha2-256-etm@openssh.com,hmac-sha2-512-etm@openssh.com,hmac-sha2-256,hmac-sha2-512";
constexpr const char* kHostKeys =
    "ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,rsa-sha2-512,"
    "rsa-sha2-256";
// Certificates of those keys (RSA ones signed with SHA-2 only), asked for when
// an @cert-authority line names the host. A libssh2 without
// scripts/patches/libssh2-hostkey-certificates.patch cannot verify a key
// exchange with them.
constexpr const char* kHostCertificates =
    "ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256-cert-v01@openssh.com,"
    "ecdsa-sha2-nistp384-cert-v01@openssh.com,ecdsa-sha2-nistp521-cert-v01@openssh.com,"
    "rsa-sha2-512-cert-v01@openssh.com,rsa-sha2-256-cert-v01@openssh.com";
#ifdef TPUSH_LIBSSH2_HOST_CERTIFICATES
constexpr bool kVerifiesHostCertificates = true;
#else
constexpr bool kVerifiesHostCertificates = false;
#endif

// Keeps the entries of `wanted` that libssh2 supports for method type `type`.
std::string supported(LIBSSH2_SESSION* session, int type, const char* wanted) {
  const char** algs = nullptr;
  const int n = libssh2_session_supported_algs(session, type, &algs);
  if (n <= 0) return wanted;
  std::set<std::string> have(algs, algs + n);
  libssh2_free(session, algs);
  std::vector<std::string> out;
  for (const auto& w : util::split(wanted, ','))
    if (have.count(w)) out.push_back(w);
  return util::join(out, ",");
}

}  // namespace

Library::Library() {
  if (libssh2_init(0) != 0) throw SetupError("cannot initialise libssh2 (its crypto backend failed to start)");
}

Library::~Library() { libssh2_exit(); }

std::string libssh2_version() { return ::libssh2_version(0); }

const MethodPrefs& method_prefs() {
  static const MethodPrefs prefs = [] {
    MethodPrefs p;
    LIBSSH2_SESSION* s = libssh2_session_init();
    p.kex = supported(s, LIBSSH2_METHOD_KEX, kKex);
    p.ciphers = supported(s, LIBSSH2_METHOD_CRYPT_CS, kCiphers);
    p.macs = supported(s, LIBSSH2_METHOD_MAC_CS, kMacs);
    libssh2_session_free(s);
    return p;
  }();
  return prefs;
}

std::string host_key_prefs(const std::vector<std::string>& known_types, bool certificates) {
  std::vector<std::string> out;
  auto add = [&](const std::string& m) {
    for (const auto& o : out)
      if (o == m) return;
    out.push_back(m);
  };
  if (certificates && kVerifiesHostCertificates)
    for (const auto& m : util::split(kHostCertificates, ',')) add(m);
  for (const auto& t : known_types) {
    if (t == "ssh-rsa") {
      add("rsa-sha2-512");
      add("rsa-sha2-256");
    } else if (t == "ssh-ed25519" || t.rfind("ecdsa-sha2-", 0) == 0) {
      add(t);
    }
  }
  for (const auto& m : util::split(kHostKeys, ',')) add(m);
  return util::join(out, ",");
}

}  // namespace tpush::ssh
