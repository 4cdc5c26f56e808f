// Logging in to one server on a handshaken libssh2 session, as ssh offers
// identities: the user certificates first (each signed for by its key), then
// the agent's keys (only those the identity files name, with
// IdentitiesOnly), then the key files. Non-blocking: advance() goes as far as
// it can, and says when libssh2 waits for the server.
//
//   Login login(identities, "alice", home);
//   switch (login.advance(session)) { ... }   // waiting / accepted / refused
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

#include "tpush/ssh/identity/credentials.h"

typedef struct _LIBSSH2_SESSION LIBSSH2_SESSION;
typedef struct _LIBSSH2_AGENT LIBSSH2_AGENT;
struct libssh2_agent_publickey;

namespace tpush::ssh {

// An RSA certificate in the agent, offered through tpush's own sign callback.
struct AgentCertificateLogin {
  std::string socket;  // "" = $SSH_AUTH_SOCK
  std::string blob;
};

class Login {
 public:
  // `identities` outlives the login.
  Login(const Identities& identities, std::string user, std::filesystem::path home);
  ~Login();  // before the session is freed: the agent connection is the session's
  Login(const Login&) = delete;
  Login& operator=(const Login&) = delete;

  enum class Step {
    waiting,   // on the server (the session's blocked direction says which way)
    accepted,  // identity() is what it logged in with
    refused,   // every identity was refused: refusal() says which and why
  };
  Step advance(LIBSSH2_SESSION* session);

  const LoginIdentity& identity() const { return identity_; }
  // "auth failed for user 'alice' (tried: agent (2 keys), ~/.ssh/id_ed25519; ...)".
  std::string refusal() const;

 private:
  // Each returns true when the login is settled for now (waiting or
  // accepted), false when it has nothing (more) to offer.
  bool try_certificates(LIBSSH2_SESSION* session);
  bool try_agent(LIBSSH2_SESSION* session);
  bool try_keys(LIBSSH2_SESSION* session);
  // Offers `key` (or `certificate`, signed for by `key`) once: libssh2's code.
  int offer(LIBSSH2_SESSION* session, const KeyFile& key, const UserCertificate* certificate);
  // The login through `key` or `certificate` was accepted (true) or refused
  // (false: noted for refusal()); `rc` is offer()'s, not EAGAIN.
  bool offered(LIBSSH2_SESSION* session, int rc, const KeyFile& key, const UserCertificate* certificate);
  void note_refused(const UserCertificate& certificate, const std::string& name);
  void accept(LoginIdentity identity);  // the login is done: the agent is let go
  bool listed(const libssh2_agent_publickey& agent_key) const;  // among the identities' keys or certificates
  void free_agent();

  const Identities& identities_;
  const std::string user_;
  const std::filesystem::path home_;
  bool accepted_ = false;
  LIBSSH2_AGENT* agent_ = nullptr;
  libssh2_agent_publickey* agent_key_ = nullptr;
  bool agent_done_ = false;
  bool agent_key_pending_ = false;
  std::size_t key_index_ = 0;
  std::size_t certificate_index_ = 0;
  void* sign_abstract_ = nullptr;            // what libssh2's sign callback is given: a SigningKey, or
  AgentCertificateLogin agent_certificate_;  // an RSA certificate the agent signs for
  int agent_keys_tried_ = 0;
  std::string last_error_;
  std::string refused_certificates_;  // "certificate ~/.ssh/k-cert.pub expired ...; ..."
  LoginIdentity identity_;
};

// The key `blob` as `identities` hold it: decoded from a file (tpush signs
// with it itself), else in the agent (asked to sign).
LoginIdentity identity_of(const Identities& identities, const std::string& blob, const std::filesystem::path& home);

}  // namespace tpush::ssh
