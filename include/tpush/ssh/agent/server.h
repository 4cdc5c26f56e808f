// The agent tpush serves to a worker on its own session: what the relay's hop
// logs in to the next worker with, in place of a key of its own (relay_job.h).
//
// tpush answers only for the identities it logged in to the planned next
// workers with, and signs only a login to one of them, once per planned hop:
//   - the worker's ssh first sends session-bind@openssh.com (OpenSSH 8.9 and
//     later): the next host's key, the session identifier and that host's
//     signature over it. tpush checks the signature, that the key is the one
//     it pinned for a planned hop, and that the worker does not forward the
//     agent further;
//   - a sign request must then be a publickey userauth request (RFC 4252)
//     for that session identifier, that host (the hostbound method names
//     it), the hop's user and identity, with RSA flags that match its
//     algorithm;
//   - without a session-bind (an older ssh) tpush signs a userauth request
//     for a planned hop's user and identity at most once per hop, and says so.
// A key tpush decoded it signs itself; one in the user's agent it passes the
// request on to (agent_client.h). Every refusal is a FAILURE reply and one
// line for -v; nothing else is ever signed.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tpush/ssh/agent/client.h"
#include "tpush/ssh/identity/credentials.h"

namespace tpush::ssh {

// One worker a sending worker may log in to.
struct PlannedHop {
  std::string label;     // "w3", for messages
  std::string host_key;  // blob, as tpush pinned it on its own session to that worker
  std::string user;
  LoginIdentity identity;
  int signatures_left = 1;
};

// What one worker may have signed: the hops planned from it.
class AgentPolicy {
 public:
  using Log = std::function<void(const std::string& line)>;
  explicit AgentPolicy(Log log) : log_(std::move(log)) {}

  void plan(PlannedHop hop) { hops_.push_back(std::move(hop)); }
  // Agent forwarding the user asked for (-A, ForwardAgent): every request goes
  // to the user's agent at `socket` ("" = $SSH_AUTH_SOCK) as it is, as ssh -A
  // passes them on. Without it and without planned hops, everything is refused.
  void forward_everything_to(std::string socket) { forward_to_ = std::move(socket); }
  const std::optional<std::string>& forwarding() const { return forward_to_; }
  const std::vector<PlannedHop>& hops() const { return hops_; }
  std::vector<PlannedHop>& hops() { return hops_; }
  void say(const std::string& line) const {
    if (log_) log_(line);
  }

 private:
  std::vector<PlannedHop> hops_;
  std::optional<std::string> forward_to_;
  Log log_;
};

// One agent channel the worker opened: reads its requests, answers each.
class AgentConversation {
 public:
  explicit AgentConversation(AgentPolicy& policy) : policy_(policy) {}

  // Bytes from the channel; answers go to output().
  void receive(std::string_view bytes);
  // Moves a request passed on to the user's agent along; true while one is under way.
  bool poll();
  // What to write to the channel (the caller erases what it wrote).
  std::string& output() { return output_; }
  // The worker sent something that is not an agent message: close the channel.
  bool broken() const { return broken_; }

 private:
  void answer(const std::string& message);
  void list_identities();
  void bind(std::string_view contents);
  void sign(std::string_view body, const std::string& message);
  void refuse(const std::string& why);
  void process();

  AgentPolicy& policy_;
  std::string input_, output_;
  bool broken_ = false;
  struct Bound {
    std::string host_key, session_id;
  };
  std::optional<Bound> bound_;
  bool bind_failed_ = false;
  std::unique_ptr<AgentRequest> passed_on_;  // a sign request at the user's agent
};

}  // namespace tpush::ssh
