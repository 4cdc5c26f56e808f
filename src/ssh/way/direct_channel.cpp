#include "tpush/ssh/way/direct_channel.h"

#include <libssh2.h>

namespace tpush::ssh {
namespace {

class Libssh2DirectChannel final : public DirectChannel {
 public:
  explicit Libssh2DirectChannel(LIBSSH2_CHANNEL* channel) : channel_(channel) {}

  long read(char* buffer, std::size_t size) override { return libssh2_channel_read(channel_, buffer, size); }
  long write(const char* data, std::size_t size) override { return libssh2_channel_write(channel_, data, size); }
  bool eof() const override { return libssh2_channel_eof(channel_) != 0; }
  int close() override {
    if (!channel_) return 0;
    const int rc = libssh2_channel_close(channel_);
    if (rc == LIBSSH2_ERROR_EAGAIN) return rc;
    libssh2_channel_free(channel_);
    channel_ = nullptr;
    return 0;
  }
  void release() override { channel_ = nullptr; }

 private:
  LIBSSH2_CHANNEL* channel_;
};

}  // namespace

std::unique_ptr<DirectChannel> open_direct_channel(LIBSSH2_SESSION* session, const std::string& host,
                                                   std::uint16_t port, int* rc) {
  LIBSSH2_CHANNEL* channel = libssh2_channel_direct_tcpip_ex(session, host.c_str(), port, "127.0.0.1", 22);
  *rc = channel ? 0 : libssh2_session_last_errno(session);
  return channel ? std::make_unique<Libssh2DirectChannel>(channel) : nullptr;
}

}  // namespace tpush::ssh
