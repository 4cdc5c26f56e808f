// What tpush can authenticate with, gathered once before any connection:
// ssh-agent first, then -i files, then the default keys that exist.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tpush/ssh/signing_key.h"

namespace tpush::ssh {

struct KeyFile {
  std::filesystem::path path;
  std::string private_key;  // file contents, read once and shared by every worker
  std::string passphrase;   // asked once on the terminal when the key is encrypted
  bool encrypted = false;
  // The key decoded once for every session; nullopt for a format only
  // libssh2 reads (an encrypted OpenSSH-format key), which then parses
  // `private_key` per session.
  std::optional<SigningKey> signing_key;
};

struct Credentials {
  bool use_agent = false;  // SSH_AUTH_SOCK is set
  std::vector<KeyFile> keys;

  // `identity_files` are -i files (must be readable). `home` holds .ssh/ with the
  // default keys. Encrypted keys get one passphrase prompt on /dev/tty when there is
  // no agent to ask; without a terminal they are skipped.
  static Credentials gather(const std::vector<std::filesystem::path>& identity_files,
                            const std::filesystem::path& home);

  // "agent, ~/.ssh/id_ed25519" — for "auth failed (tried: ...)".
  std::string describe(const std::filesystem::path& home) const;
};

// The default keys (~/.ssh/id_ed25519, id_ecdsa, id_rsa, google_compute_engine)
// that exist under `home`, in the order they are tried.
std::vector<std::filesystem::path> default_identity_files(const std::filesystem::path& home);

// True when the private key text (PEM or OpenSSH format) is passphrase-protected.
bool is_encrypted_private_key(const std::string& text);

}  // namespace tpush::ssh
