#include "tpush/ssh/agent/client.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "tpush/ssh/agent/protocol.h"
#include "tpush/ssh/wire.h"

namespace tpush::ssh {

AgentRequest::AgentRequest(std::string socket, std::string_view message)
    : socket_(std::move(socket)), out_(agent::frame(static_cast<std::uint8_t>(message.at(0)), message.substr(1))) {
  if (socket_.empty()) {
    const char* env = std::getenv("SSH_AUTH_SOCK");
    socket_ = env ? env : "";
  }
  if (socket_.empty()) { fail("no agent to ask: SSH_AUTH_SOCK is not set"); return; }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_.size() >= sizeof addr.sun_path) { fail("the agent's socket path is too long: " + socket_); return; }
  std::memcpy(addr.sun_path, socket_.c_str(), socket_.size() + 1);
  fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) {
    fail(std::string("cannot make a socket: ") + std::strerror(errno));
    return;
  }
  // A Unix socket connects at once (or fails: EAGAIN when the agent's backlog is full).
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    fail("cannot connect to the agent at " + socket_ + ": " + std::strerror(errno));
}

AgentRequest::~AgentRequest() {
  if (fd_ >= 0) ::close(fd_);
}

void AgentRequest::fail(std::string why) {
  error_ = std::move(why);
  state_ = State::failed;
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

AgentRequest::State AgentRequest::poll() {
  if (state_ != State::running) return state_;
  while (sent_ < out_.size()) {
    const ssize_t n = ::send(fd_, out_.data() + sent_, out_.size() - sent_, MSG_NOSIGNAL);
    if (n < 0 && errno == EAGAIN) return state_;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      fail("cannot write to the agent at " + socket_ + ": " + std::strerror(errno));
      return state_;
    }
    sent_ += static_cast<std::size_t>(n);
  }
  char buf[16384];
  for (;;) {
    const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return state_;
    if (n <= 0) {
      fail("the agent at " + socket_ + " closed the connection without an answer");
      return state_;
    }
    reply_.append(buf, static_cast<std::size_t>(n));
    std::string pending = reply_;
    bool bad = false;
    if (agent::take_message(pending, bad)) {
      reply_.resize(reply_.size() - pending.size());
      ::close(fd_);
      fd_ = -1;
      state_ = State::done;
      return state_;
    }
    if (bad) {
      fail("the agent at " + socket_ + " sent a message tpush cannot read");
      return state_;
    }
  }
}

std::optional<std::string> sign_with_agent(const std::string& socket, std::string_view blob, std::string_view data,
                                           std::uint32_t flags, std::chrono::milliseconds timeout, std::string& error) {
  std::string message(1, static_cast<char>(agent::kSignRequest));
  wire::put_string(message, blob);
  wire::put_string(message, data);
  wire::put_u32(message, flags);
  AgentRequest request(socket, message);
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (request.poll() == AgentRequest::State::running) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      error = "the agent did not answer a sign request within " + std::to_string(timeout.count() / 1000) + " s";
      return std::nullopt;
    }
    pollfd p{request.fd(), static_cast<short>(request.sending() ? POLLOUT : POLLIN), 0};
    ::poll(&p, 1, static_cast<int>(left.count()));
  }
  if (request.state() == AgentRequest::State::failed) {
    error = request.error();
    return std::nullopt;
  }
  std::string reply = request.reply();
  bool bad = false;
  const auto answer = agent::take_message(reply, bad);
  if (!answer || answer->empty() || static_cast<std::uint8_t>((*answer)[0]) != agent::kSignResponse) {
    error = "the agent refused to sign";
    return std::nullopt;
  }
  wire::Reader r(std::string_view(*answer).substr(1));
  const auto signature = r.string();
  if (!signature) {
    error = "the agent sent a sign response tpush cannot read";
    return std::nullopt;
  }
  return std::string(*signature);
}

}  // namespace tpush::ssh
