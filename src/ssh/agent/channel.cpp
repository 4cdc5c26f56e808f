#include "tpush/ssh/agent/channel.h"

#include <libssh2.h>

namespace tpush::ssh {

bool AgentChannel::advance() {
  if (!channel_) return false;
  if (!closing_) {
    conversation_.poll();
    char buf[4096];
    for (;;) {
      const ssize_t n = libssh2_channel_read(channel_, buf, sizeof buf);
      if (n > 0) {
        conversation_.receive({buf, static_cast<std::size_t>(n)});
        continue;
      }
      if (n == LIBSSH2_ERROR_EAGAIN) break;
      if (n < 0) {
        closing_ = true;  // a channel error: nothing more will come
        break;
      }
      if (libssh2_channel_eof(channel_)) closing_ = true;
      break;
    }
    std::string& out = conversation_.output();
    while (!out.empty()) {
      const ssize_t n = libssh2_channel_write(channel_, out.data(), out.size());
      if (n == LIBSSH2_ERROR_EAGAIN) break;
      if (n < 0) {
        closing_ = true;
        out.clear();
        break;
      }
      out.erase(0, static_cast<std::size_t>(n));
    }
    if (conversation_.broken() && out.empty()) closing_ = true;
    if (!closing_) return true;
  }
  if (!closed_) {
    if (libssh2_channel_close(channel_) == LIBSSH2_ERROR_EAGAIN) return true;
    closed_ = true;
  }
  if (libssh2_channel_free(channel_) == LIBSSH2_ERROR_EAGAIN) return true;
  channel_ = nullptr;
  return false;
}

}  // namespace tpush::ssh
