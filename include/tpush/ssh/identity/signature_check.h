// Checks an SSH signature made by a public key given as a blob: how tpush
// knows that a session-bind a worker's ssh sends names a host that really
// signed that session (agent/server.h), and that a certificate authority
// signed a certificate (certificate.h).
#pragma once

#include <string_view>

namespace tpush::ssh {

// True when `signature` (a blob: string algorithm, string signature) is a
// valid signature over `data` by the key `key_blob`: ssh-ed25519,
// ecdsa-sha2-nistp256/384/521, or RSA with rsa-sha2-256/512 (not SHA-1).
// False for anything else, malformed input included.
bool signature_valid(std::string_view key_blob, std::string_view signature, std::string_view data);

}  // namespace tpush::ssh
