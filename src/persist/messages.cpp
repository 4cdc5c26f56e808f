#include "tpush/persist/messages.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

namespace tpush::persist {
namespace {

constexpr std::size_t kMaxFds = 8;
// Large enough for any environment a client may send (sends beyond the
// socket's buffer fail with EMSGSIZE and the client runs directly).
constexpr std::size_t kMaxMessage = 1u << 20;

}  // namespace

bool send_message(int sock, const std::vector<std::string>& fields, const std::vector<int>& fds) {
  std::string body;
  for (const auto& f : fields) {
    body += f;
    body += '\0';
  }
  iovec iov{body.data(), body.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)]{};
  if (!fds.empty()) {
    if (fds.size() > kMaxFds) {
      errno = EINVAL;
      return false;
    }
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  ssize_t n;
  do n = ::sendmsg(sock, &msg, MSG_NOSIGNAL);
  while (n < 0 && errno == EINTR);
  return n == static_cast<ssize_t>(body.size());
}

std::optional<Message> receive_message(int sock) {
  // Not zeroed: only the pages the message lands on are touched (zeroing the
  // whole megabyte cost each message ~3 ms of page faults on a slow VM).
  const std::unique_ptr<char[]> buffer(new char[kMaxMessage]);
  iovec iov{buffer.get(), kMaxMessage};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)]{};
  msg.msg_control = control;
  msg.msg_controllen = sizeof(control);
  ssize_t n;
  do n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  if (n <= 0) {
    if (n == 0) errno = 0;
    return std::nullopt;
  }
  Message m;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    m.fds.resize(m.fds.size() + count);
    std::memcpy(m.fds.data() + m.fds.size() - count, CMSG_DATA(c), count * sizeof(int));
  }
  const std::string body(buffer.get(), static_cast<std::size_t>(n));
  if ((msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0 || body.empty() || body.back() != '\0') {
    close_fds(m);
    errno = EMSGSIZE;
    return std::nullopt;
  }
  std::size_t start = 0;
  for (std::size_t i = 0; i < body.size(); ++i) {
    if (body[i] != '\0') continue;
    m.fields.emplace_back(body, start, i - start);
    start = i + 1;
  }
  return m;
}

void close_fds(Message& m) {
  for (int fd : m.fds) ::close(fd);
  m.fds.clear();
}

std::optional<Peer> peer_of(int sock) {
  ucred cred{};
  socklen_t len = sizeof(cred);
  if (::getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return std::nullopt;
  return Peer{cred.pid, cred.uid};
}

}  // namespace tpush::persist
