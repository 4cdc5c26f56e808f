// A direct-tcpip channel (what `ssh -W` and ProxyJump open): a jump host's
// way to one worker, as the jump host (jump_host.h) relays it. The real one
// is libssh2's, opened by Session::open_direct; a test's fake session hands
// out its own. Results are libssh2's: bytes moved, or a LIBSSH2_ERROR_* code
// (EAGAIN: the same call again once the session's socket allows).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

typedef struct _LIBSSH2_SESSION LIBSSH2_SESSION;

namespace tpush::ssh {

class DirectChannel {
 public:
  virtual ~DirectChannel() = default;

  virtual long read(char* buffer, std::size_t size) = 0;
  virtual long write(const char* data, std::size_t size) = 0;
  // The worker's server sent EOF.
  virtual bool eof() const = 0;
  // Closes and frees the channel: 0 once done, LIBSSH2_ERROR_EAGAIN while
  // that waits (call again).
  virtual int close() = 0;
  // Forgets the channel without touching the network: freeing the session
  // frees it.
  virtual void release() = 0;
};

// Opens a channel to host:port on `session` (from originator 127.0.0.1:22, as
// OpenSSH's ssh -W says). Null with `*rc` set when it is not open (yet).
std::unique_ptr<DirectChannel> open_direct_channel(LIBSSH2_SESSION* session, const std::string& host,
                                                   std::uint16_t port, int* rc);

}  // namespace tpush::ssh
