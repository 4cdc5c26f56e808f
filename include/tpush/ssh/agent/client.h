// One request to the user's own ssh-agent, without blocking: how tpush passes
// on a sign request for a key that lives in the agent (agent_server.h). A
// connection of its own to the agent's socket, non-blocking; poll() moves it
// on (the caller polls on every turn and tick: an agent answers in
// milliseconds, or waits for the user's confirmation of a `ssh-add -c` key).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tpush::ssh {

class AgentRequest {
 public:
  enum class State { running, done, failed };

  // `socket`: the agent's socket ("" = $SSH_AUTH_SOCK). `message`: its type
  // byte and body (not empty), framed here.
  AgentRequest(std::string socket, std::string_view message);
  ~AgentRequest();
  AgentRequest(const AgentRequest&) = delete;
  AgentRequest& operator=(const AgentRequest&) = delete;

  State poll();
  State state() const { return state_; }
  // Once done: the agent's reply, framed as it came.
  const std::string& reply() const { return reply_; }
  // Once failed: what went wrong ("cannot connect to the agent at PATH: ...").
  const std::string& error() const { return error_; }
  int fd() const { return fd_; }  // while running
  bool sending() const { return sent_ < out_.size(); }  // else waiting for the reply

 private:
  void fail(std::string why);

  std::string socket_;
  std::string out_, reply_, error_;
  std::size_t sent_ = 0;
  int fd_ = -1;
  State state_ = State::running;
};

// Asks the agent at `socket` ("" = $SSH_AUTH_SOCK) to sign `data` with the
// key `blob` (SIGN_REQUEST with `flags`), waiting up to `timeout` for the
// answer: the signature blob (string algorithm, string signature), or nullopt
// with `error` set. For the one login libssh2's agent code gets wrong (an RSA
// certificate: it asks for SHA-1), where libssh2 itself would block as long.
std::optional<std::string> sign_with_agent(const std::string& socket, std::string_view blob, std::string_view data,
                                           std::uint32_t flags, std::chrono::milliseconds timeout, std::string& error);

}  // namespace tpush::ssh
