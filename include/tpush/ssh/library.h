// Process-wide libssh2 setup and the algorithm lists tpush asks for.
#pragma once

#include <string>
#include <vector>

namespace tpush::ssh {

// Initialises libssh2 (and its crypto backend) once; destroyed at exit.
class Library {
 public:
  Library();
  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
};

std::string libssh2_version();

// Modern algorithms only (no ssh-rsa/SHA-1 signatures, group1, 3des, CBC),
// filtered to what this libssh2 build supports. Comma lists for
// libssh2_session_method_pref.
struct MethodPrefs {
  std::string kex, ciphers, macs;
};
const MethodPrefs& method_prefs();

// The host-key algorithms to ask for, known types first (so a host whose
// ed25519 key is on record is not asked for ECDSA and then judged "unknown"),
// and before them certificates when `certificates` (an @cert-authority line
// names the host) and this libssh2 can verify with them.
std::string host_key_prefs(const std::vector<std::string>& known_types, bool certificates = false);

}  // namespace tpush::ssh
