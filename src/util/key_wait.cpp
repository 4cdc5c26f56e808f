#include "tpush/util/key_wait.h"

#include <poll.h>

#include <cerrno>

namespace tpush::util {

KeyWait wait_key_or_signal(int key_fd, int signal_fd, int timeout_ms) {
  pollfd fds[2] = {{key_fd, POLLIN, 0}, {signal_fd, POLLIN, 0}};
  const int n = ::poll(fds, signal_fd >= 0 ? 2 : 1, timeout_ms);
  if (n < 0) return errno == EINTR ? KeyWait::timeout : KeyWait::failed;
  if (n == 0) return KeyWait::timeout;
  if (signal_fd >= 0 && (fds[1].revents & POLLIN)) return KeyWait::signal;
  if (fds[0].revents & POLLIN) return KeyWait::key;
  if (fds[0].revents & (POLLHUP | POLLERR | POLLNVAL)) return KeyWait::keys_gone;
  return KeyWait::timeout;
}

}  // namespace tpush::util
