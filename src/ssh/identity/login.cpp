#include "tpush/ssh/identity/login.h"

#include <libssh2.h>

#include <cstring>
#include <ctime>
#include <optional>
#include <string_view>
#include <utility>

#include <spdlog/spdlog.h>

#include "tpush/ssh/agent/client.h"
#include "tpush/ssh/agent/protocol.h"
#include "tpush/ssh/hangup.h"
#include "tpush/ssh/last_error.h"
#include "tpush/ssh/session_memory.h"
#include "tpush/ssh/wire.h"

namespace tpush::ssh {
namespace {

// A sign callback's answer: `signature` in memory of the session's allocator,
// which libssh2 frees it with. -1 (libssh2's "callback failed") without one.
int hand_signature(std::optional<std::string_view> signature, unsigned char** sig, std::size_t* sig_len) {
  if (!signature) return -1;
  *sig = static_cast<unsigned char*>(session_memory::allocate(signature->size(), nullptr));
  if (!*sig) return -1;
  std::memcpy(*sig, signature->data(), signature->size());
  *sig_len = signature->size();
  return 0;
}

// libssh2's sign callback for keys tpush decoded itself.
int sign_with_key(LIBSSH2_SESSION*, unsigned char** sig, std::size_t* sig_len, const unsigned char* data,
                  std::size_t data_len, void** abstract) {
  const auto* key = static_cast<const SigningKey*>(*abstract);
  const auto signature = key->sign_userauth_request({reinterpret_cast<const char*>(data), data_len});
  return hand_signature(signature ? std::optional<std::string_view>(*signature) : std::nullopt, sig, sig_len);
}

// libssh2's sign callback for an RSA certificate in the agent (libssh2's own
// asks the agent for SHA-1, which OpenSSH refuses): the agent is asked for
// the hash the request names, and the signature checked to be of that kind.
int sign_with_agent_rsa_certificate(LIBSSH2_SESSION*, unsigned char** sig, std::size_t* sig_len,
                                    const unsigned char* data, std::size_t data_len, void** abstract) {
  const auto* target = static_cast<const AgentCertificateLogin*>(*abstract);
  const std::string_view request(reinterpret_cast<const char*>(data), data_len);
  const auto login = agent::parse_userauth_request(request);
  if (!login) return -1;
  const std::string_view algorithm = plain_signature_algorithm(login->algorithm);
  const std::uint32_t flags = algorithm == "rsa-sha2-512"   ? agent::kRsaSha2_512
                              : algorithm == "rsa-sha2-256" ? agent::kRsaSha2_256
                                                            : 0;
  std::string error;
  const auto blob = sign_with_agent(target->socket, target->blob, request, flags, std::chrono::seconds(30), error);
  if (!blob) spdlog::debug("the agent's RSA certificate: {}", error);
  wire::Reader r(blob ? std::string_view(*blob) : std::string_view());
  const auto kind = r.string();
  const auto signature = r.string();
  return hand_signature(signature && *kind == algorithm ? signature : std::nullopt, sig, sig_len);
}

}  // namespace

Login::Login(const Identities& identities, std::string user, std::filesystem::path home)
    : identities_(identities), user_(std::move(user)), home_(std::move(home)) {}

Login::~Login() { free_agent(); }

Login::Step Login::advance(LIBSSH2_SESSION* session) {
  if (try_certificates(session) || try_agent(session) || try_keys(session))
    return accepted_ ? Step::accepted : Step::waiting;
  return Step::refused;
}

std::string Login::refusal() const {
  std::string tried = identities_.describe(home_);
  if (agent_keys_tried_ > 0)
    if (const auto at = tried.find("agent"); at != std::string::npos)
      tried.replace(at, 5, "agent (" + std::to_string(agent_keys_tried_) + " key" +
                               (agent_keys_tried_ == 1 ? ")" : "s)"));
  std::string why = refused_certificates_;
  if (!last_error_.empty() && last_error_.find("Unable to") != std::string::npos)
    why += (why.empty() ? "" : "; ") + last_error_;
  return "auth failed for user '" + user_ + "' (tried: " + tried + (why.empty() ? "" : "; " + why) + ")";
}

bool Login::try_certificates(LIBSSH2_SESSION* session) {
  const auto& certificates = identities_.certificates;
  while (certificate_index_ < certificates.size()) {
    const UserCertificate& certificate = *certificates[certificate_index_];
    const int rc = offer(session, *certificate.key, &certificate);
    if (rc == LIBSSH2_ERROR_EAGAIN) return true;
    ++certificate_index_;
    if (offered(session, rc, *certificate.key, &certificate)) return true;
    note_refused(certificate, "certificate " + shorten_home(certificate.path, home_));
    if (is_hangup(rc)) {  // the server hung up (MaxAuthTries): no point in trying more
      agent_done_ = true;
      key_index_ = identities_.keys.size();
      break;
    }
  }
  return false;
}

void Login::note_refused(const UserCertificate& certificate, const std::string& name) {
  const std::string unfit = certificate.unfit_for(user_, std::time(nullptr));
  if (!unfit.empty()) refused_certificates_ += (refused_certificates_.empty() ? "" : "; ") + name + " " + unfit;
}

int Login::offer(LIBSSH2_SESSION* session, const KeyFile& key, const UserCertificate* certificate) {
  if (key.signing_key) {
    sign_abstract_ = const_cast<SigningKey*>(&*key.signing_key);
    const std::string& blob = certificate ? certificate->blob : key.signing_key->public_blob();
    return libssh2_userauth_publickey(session, user_.c_str(), reinterpret_cast<const unsigned char*>(blob.data()),
                                      blob.size(), &sign_with_key, &sign_abstract_);
  }
  // libssh2 reads the key (and the certificate's "type base64" line) itself.
  return libssh2_userauth_publickey_frommemory(
      session, user_.data(), user_.size(), certificate ? certificate->text.data() : nullptr,
      certificate ? certificate->text.size() : 0, key.private_key.data(), key.private_key.size(),
      key.passphrase.empty() ? nullptr : key.passphrase.c_str());
}

bool Login::offered(LIBSSH2_SESSION* session, int rc, const KeyFile& key, const UserCertificate* certificate) {
  if (rc != 0) {
    last_error_ = last_error(session);
    return false;
  }
  LoginIdentity identity{key.public_blob, key.signing_key ? &*key.signing_key : nullptr, std::nullopt,
                         shorten_home(certificate ? certificate->path : key.path, home_)};
  if (key.signing_key) identity.blob = key.signing_key->public_blob();
  if (certificate) identity.blob = certificate->blob;
  accept(std::move(identity));
  return true;
}

bool Login::try_agent(LIBSSH2_SESSION* session) {
  if (agent_done_ || !identities_.agent_socket) return false;
  if (!agent_) {
    agent_ = libssh2_agent_init(session);
    if (agent_ && !identities_.agent_socket->empty())
      libssh2_agent_set_identity_path(agent_, identities_.agent_socket->c_str());  // IdentityAgent
    if (!agent_ || libssh2_agent_connect(agent_) != 0 || libssh2_agent_list_identities(agent_) != 0) {
      agent_done_ = true;
      return false;
    }
  }
  for (;;) {
    if (!agent_key_pending_) {
      libssh2_agent_publickey* next = nullptr;
      if (libssh2_agent_get_identity(agent_, &next, agent_key_) != 0) {
        agent_done_ = true;
        return false;
      }
      agent_key_ = next;
      if (identities_.identities_only && !listed(*agent_key_)) continue;  // IdentitiesOnly
      agent_key_pending_ = true;
      ++agent_keys_tried_;
    }
    const std::string_view blob(reinterpret_cast<const char*>(agent_key_->blob), agent_key_->blob_len);
    int rc;
    if (wire::blob_type(blob) == "ssh-rsa-cert-v01@openssh.com") {
      agent_certificate_ = {identities_.agent_socket.value_or(""), std::string(blob)};
      sign_abstract_ = &agent_certificate_;
      rc = libssh2_userauth_publickey(session, user_.c_str(), agent_key_->blob, agent_key_->blob_len,
                                      &sign_with_agent_rsa_certificate, &sign_abstract_);
    } else {
      rc = libssh2_agent_userauth(agent_, user_.c_str(), agent_key_);
    }
    if (rc == LIBSSH2_ERROR_EAGAIN) return true;
    agent_key_pending_ = false;
    if (rc == 0) {
      accept(identity_of(identities_, std::string(blob), home_));
      return true;
    }
    last_error_ = last_error(session);
    if (const auto certificate = UserCertificate::parse(blob))
      note_refused(*certificate, "the agent's certificate '" + certificate->key_id + "'");
    if (is_hangup(rc)) {
      agent_done_ = true;
      key_index_ = identities_.keys.size();  // the server hung up
      return false;
    }
  }
}

bool Login::try_keys(LIBSSH2_SESSION* session) {
  const auto& keys = identities_.keys;
  while (key_index_ < keys.size()) {
    const KeyFile& key = *keys[key_index_];
    if (key.unasked) {
      ++key_index_;
      continue;
    }
    const int rc = offer(session, key, nullptr);
    if (rc == LIBSSH2_ERROR_EAGAIN) return true;
    ++key_index_;
    if (offered(session, rc, key, nullptr)) return true;
    if (is_hangup(rc)) break;  // the server hung up (MaxAuthTries): no point in trying more
  }
  return false;
}

void Login::accept(LoginIdentity identity) {
  identity_ = std::move(identity);
  accepted_ = true;
  free_agent();
}

bool Login::listed(const libssh2_agent_publickey& agent_key) const {
  const std::string_view blob(reinterpret_cast<const char*>(agent_key.blob), agent_key.blob_len);
  for (const KeyFile* k : identities_.keys)
    if (!k->public_blob.empty() && k->public_blob == blob) return true;
  for (const UserCertificate* c : identities_.certificates)  // the agent's copy of a listed certificate
    if (c->blob == blob) return true;
  return false;
}

void Login::free_agent() {
  if (!agent_) return;
  libssh2_agent_disconnect(agent_);
  libssh2_agent_free(agent_);
  agent_ = nullptr;
}

LoginIdentity identity_of(const Identities& identities, const std::string& blob, const std::filesystem::path& home) {
  for (const KeyFile* k : identities.keys)
    if (k->signing_key && k->signing_key->public_blob() == blob)
      return LoginIdentity{blob, &*k->signing_key, std::nullopt, shorten_home(k->path, home)};
  const std::string type = wire::blob_type(blob);
  return LoginIdentity{blob, nullptr, identities.agent_socket,
                       "the agent's " + (type.empty() ? std::string("key") : type) + " key"};
}

}  // namespace tpush::ssh
