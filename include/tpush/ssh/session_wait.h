// What a non-blocking libssh2 call that returned EAGAIN is waiting for.
#pragma once

#include "tpush/util/wait.h"

typedef struct _LIBSSH2_SESSION LIBSSH2_SESSION;

namespace tpush::ssh {

// Write when libssh2 has a packet half-sent (LIBSSH2_SESSION_BLOCK_OUTBOUND),
// else read: the one translation of libssh2's block directions.
util::Wait blocked_direction(LIBSSH2_SESSION* session);

// True while libssh2 has a packet half-sent: nothing else may be written first.
bool sending(LIBSSH2_SESSION* session);

}  // namespace tpush::ssh
