#pragma once

namespace tpush::ssh {

// True for libssh2 errors that mean the connection itself is gone (the peer
// closed it, or the socket failed), as opposed to a refused request.
bool is_hangup(int libssh2_rc);

}  // namespace tpush::ssh
