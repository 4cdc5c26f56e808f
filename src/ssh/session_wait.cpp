#include "tpush/ssh/session_wait.h"

#include <libssh2.h>

namespace tpush::ssh {

bool sending(LIBSSH2_SESSION* session) {
  return libssh2_session_block_directions(session) & LIBSSH2_SESSION_BLOCK_OUTBOUND;
}

util::Wait blocked_direction(LIBSSH2_SESSION* session) {
  return sending(session) ? util::Wait::write : util::Wait::read;
}

}  // namespace tpush::ssh
