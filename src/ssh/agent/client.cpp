#include "tpush/ssh/agent/client.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "tpush/ssh/agent/protocol.h"

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

}  // namespace tpush::ssh
