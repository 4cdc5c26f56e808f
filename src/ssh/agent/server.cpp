#include "tpush/ssh/agent/server.h"

#include "tpush/ssh/agent/protocol.h"
#include "tpush/ssh/identity/signature_check.h"
#include "tpush/ssh/identity/known_hosts.h"
#include "tpush/ssh/identity/signing_key.h"
#include "tpush/ssh/wire.h"

namespace tpush::ssh {
namespace {

std::string describe_key(std::string_view blob) {
  const std::string type = wire::blob_type(blob);
  return (type.empty() ? "unknown" : type) + " " + fingerprint_sha256(blob);
}

}  // namespace

void AgentConversation::receive(std::string_view bytes) {
  input_.append(bytes);
  process();
}

void AgentConversation::process() {
  while (!passed_on_ && !broken_) {
    auto message = agent::take_message(input_, broken_);
    if (!message) return;
    if (policy_.forwarding()) {
      passed_on_ = std::make_unique<AgentRequest>(*policy_.forwarding(), *message);
      continue;
    }
    answer(*message);
  }
}

bool AgentConversation::poll() {
  if (!passed_on_) return false;
  switch (passed_on_->poll()) {
    case AgentRequest::State::running:
      return true;
    case AgentRequest::State::done: {
      const std::string& reply = passed_on_->reply();
      if (policy_.forwarding() || (reply.size() > 4 && static_cast<std::uint8_t>(reply[4]) == agent::kSignResponse)) {
        output_ += reply;
      } else {
        policy_.say("agent: the user's agent refused to sign");
        output_ += agent::frame(agent::kFailure);
      }
      break;
    }
    case AgentRequest::State::failed:
      policy_.say("agent: refused: " + passed_on_->error());
      output_ += agent::frame(agent::kFailure);
      break;
  }
  passed_on_.reset();
  process();
  return passed_on_ != nullptr;
}

void AgentConversation::refuse(const std::string& why) {
  policy_.say("agent: refused: " + why);
  output_ += agent::frame(agent::kFailure);
}

void AgentConversation::answer(const std::string& message) {
  const auto type = static_cast<std::uint8_t>(message[0]);
  const std::string_view body = std::string_view(message).substr(1);
  switch (type) {
    case agent::kRequestIdentities:
      return list_identities();
    case agent::kSignRequest:
      return sign(body, message);
    case agent::kExtension: {
      wire::Reader r(body);
      const auto name = r.string();
      if (name && *name == "session-bind@openssh.com") return bind(r.rest());
      output_ += agent::frame(agent::kFailure);  // any other extension: unknown here, as to ssh-agent
      return;
    }
    default:
      return refuse("a request of type " + std::to_string(type) + " (tpush only lists and signs)");
  }
}

void AgentConversation::list_identities() {
  // The identities of the hops still open (in practice one: a worker passes
  // the bytes on to one next worker at a time).
  std::vector<const std::string*> blobs;
  for (const PlannedHop& hop : policy_.hops()) {
    if (hop.signatures_left <= 0 || hop.identity.blob.empty()) continue;
    bool seen = false;
    for (const std::string* b : blobs) seen = seen || *b == hop.identity.blob;
    if (!seen) blobs.push_back(&hop.identity.blob);
  }
  std::string body;
  wire::put_u32(body, static_cast<std::uint32_t>(blobs.size()));
  for (const std::string* b : blobs) {
    wire::put_string(body, *b);
    wire::put_string(body, "tpush relay");
  }
  output_ += agent::frame(agent::kIdentitiesAnswer, body);
}

void AgentConversation::bind(std::string_view contents) {
  const auto b = agent::parse_session_bind(contents);
  if (!b) return refuse("a session-bind tpush cannot read");
  const auto failed = [this](const std::string& why) {
    bind_failed_ = true;
    refuse(why);
  };
  if (bound_ || bind_failed_) return failed("a second session-bind on one agent connection");
  if (b->forwarding) return failed("the worker's ssh asked to forward the agent further");
  if (!signature_valid(b->host_key, b->signature, b->session_id))
    return failed("a session-bind for " + describe_key(b->host_key) + " whose signature does not check out");
  for (const PlannedHop& hop : policy_.hops()) {
    if (hop.host_key != b->host_key) continue;
    bound_ = Bound{b->host_key, b->session_id};
    output_ += agent::frame(agent::kSuccess);
    return;
  }
  failed("a session-bind for a host that is no planned hop (" + describe_key(b->host_key) + ")");
}

void AgentConversation::sign(std::string_view body, const std::string& message) {
  const auto request = agent::parse_sign_request(body);
  if (!request) return refuse("a sign request tpush cannot read");
  const auto login = agent::parse_userauth_request(request->data);
  if (!login) return refuse("a sign request that is not a login (only a login to a planned hop is signed)");
  if (login->key != request->key) return refuse("a login request for another key than the one to sign with");
  if (bind_failed_) return refuse("a login after a session-bind that was refused");
  PlannedHop* hop = nullptr;
  for (PlannedHop& h : policy_.hops()) {
    if (h.identity.blob != request->key || h.user != login->user) continue;
    if (bound_ && h.host_key != bound_->host_key) continue;
    if (!bound_ && !login->host_key.empty() && h.host_key != login->host_key) continue;
    if (h.signatures_left <= 0 && hop) continue;
    hop = &h;
    if (h.signatures_left > 0) break;
  }
  if (!hop) return refuse("a login as '" + login->user + "' with " + describe_key(request->key) +
                          (bound_ ? " to " + describe_key(bound_->host_key) : std::string()) + ": no such hop is planned");
  if (hop->signatures_left <= 0) return refuse("a second login to " + hop->label + " (one is signed per planned hop)");
  if (bound_) {
    if (login->session_id != bound_->session_id) return refuse("a login for another session than the one bound");
    if (!login->host_key.empty() && login->host_key != bound_->host_key)
      return refuse("a login naming another host than the one bound");
  } else {
    policy_.say("agent: the worker's ssh sent no session-bind (older than OpenSSH 8.9?): signing its one login to " +
                hop->label + " unchecked");
  }
  const std::string type = wire::blob_type(request->key);
  if (type == "ssh-rsa" ? request->flags != agent::rsa_flags_for(login->algorithm) : login->algorithm != type)
    return refuse("a login whose algorithm " + login->algorithm + " does not match the key or the flags");

  const LoginIdentity& id = hop->identity;
  if (id.key) {
    const auto signature = id.key->sign_userauth_request(request->data);
    if (!signature) return refuse("signing with " + id.name + " failed");
    --hop->signatures_left;
    policy_.say("agent: signed the login to " + hop->label + " as '" + login->user + "' with " + id.name);
    output_ += agent::sign_response(login->algorithm, *signature);
    return;
  }
  if (!id.agent_socket)
    return refuse(id.name + " is a key only libssh2 reads (an encrypted OpenSSH-format key): tpush cannot sign with it");
  --hop->signatures_left;
  policy_.say("agent: passing the login to " + hop->label + " as '" + login->user + "' on to the user's agent");
  passed_on_ = std::make_unique<AgentRequest>(*id.agent_socket, message);
}

}  // namespace tpush::ssh
