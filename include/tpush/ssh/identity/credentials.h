// What tpush can authenticate with, gathered once before any connection:
// ssh-agent first, then -i files, then the default keys that exist.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tpush/ssh/identity/signing_key.h"
#include "tpush/ssh/identity/user_certificate.h"

namespace tpush::ssh {

struct KeyFile {
  std::filesystem::path path;
  std::string private_key;  // file contents, read once and shared by every worker
  // The public key blob (from the decoded key, else FILE.pub), to pick this
  // key out of the agent's (IdentitiesOnly); empty when unknown.
  std::string public_blob;
  std::string passphrase;   // asked once on the terminal when the key is encrypted
  bool encrypted = false;
  // Encrypted, and its passphrase was not asked: every worker of the run had a
  // session kept by a persist master, so none had to log in. Not offered.
  bool unasked = false;
  // The key decoded once for every session; nullopt for a format only
  // libssh2 reads (an encrypted OpenSSH-format key), which then parses
  // `private_key` per session.
  std::optional<SigningKey> signing_key;
  // KEY-cert.pub beside it (one of Credentials::certificates), offered before
  // the key itself; null when there is none.
  const UserCertificate* certificate = nullptr;
};

// What one worker may authenticate with: the agent (at its socket) and
// some of the gathered keys, in order. IdentitiesOnly keeps only the agent's
// keys that are among them (OpenSSH's rule).
struct Identities {
  // Offered first, each signed for by its key file: those CertificateFile
  // names, else those beside the keys (KEY-cert.pub).
  std::vector<const UserCertificate*> certificates;
  std::optional<std::string> agent_socket;  // nullopt: no agent; "": $SSH_AUTH_SOCK
  std::vector<const KeyFile*> keys;
  bool identities_only = false;

  // "~/.ssh/id_ed25519-cert.pub, agent, ~/.ssh/id_ed25519": what is offered,
  // in order, for "auth failed (tried: ...)".
  std::string describe(const std::filesystem::path& home) const;
};

// The identity a session logged in with: what tpush may serve on an agent
// channel (agent_server.h).
struct LoginIdentity {
  std::string blob;                         // public key blob; empty: unknown
  const SigningKey* key = nullptr;          // decoded; null: in the agent, or only libssh2 reads it
  std::optional<std::string> agent_socket;  // set when the key is the agent's ("" = $SSH_AUTH_SOCK)
  std::string name;                         // "~/.ssh/id_ed25519", "a key in the agent": for messages
};

struct Credentials {
  bool use_agent = false;  // SSH_AUTH_SOCK is set
  std::vector<KeyFile> keys;
  // Every certificate read (beside a key, or named by CertificateFile), each
  // paired with the key file that holds its key.
  std::vector<UserCertificate> certificates;

  // `identity_files` are -i files (must be readable); `other_files` are read
  // when they exist (ssh_config's IdentityFile, the defaults: missing ones
  // are skipped, as ssh skips them). Encrypted keys get one passphrase prompt
  // on /dev/tty when there is no agent to ask; without a terminal they are
  // skipped, and with `ask` false they are kept unasked (KeyFile::unasked).
  // Each file is read and decoded once, whatever number of workers use it.
  // `certificate_files` (CertificateFile) are read when they exist, as are
  // the KEY-cert.pub files beside the keys. Throws UsageError for a file that
  // is not a user certificate, or certifies another key than the one beside
  // it, or (without an agent to hold it) a key no identity file holds.
  static Credentials gather(const std::vector<std::filesystem::path>& identity_files,
                            const std::vector<std::filesystem::path>& other_files,
                            const std::vector<std::filesystem::path>& certificate_files = {}, bool ask = true,
                            int terminal = -1);
  // The gathered key read from `path`, or null (missing, unreadable, skipped).
  const KeyFile* find(const std::filesystem::path& path) const;
  // Every key (each with the certificate beside it) and the agent: what a
  // worker without ssh_config settings uses.
  Identities all() const;
  // The gathered certificate read from `path`, or null.
  const UserCertificate* find_certificate(const std::filesystem::path& path) const;

 private:
  void pair_certificates(const std::vector<std::filesystem::path>& certificate_files);
};

// The default keys (~/.ssh/id_ed25519, id_ecdsa, id_rsa, google_compute_engine)
// that exist under `home`, in the order they are tried.
std::vector<std::filesystem::path> default_identity_files(const std::filesystem::path& home);

// `p` with `home` written as "~", for messages.
std::string shorten_home(const std::filesystem::path& p, const std::filesystem::path& home);

// True when the private key text (PEM or OpenSSH format) is passphrase-protected.
bool is_encrypted_private_key(const std::string& text);

}  // namespace tpush::ssh
