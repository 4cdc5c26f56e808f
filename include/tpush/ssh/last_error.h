// libssh2's own words for the last error on a session.
#pragma once

#include <string>

typedef struct _LIBSSH2_SESSION LIBSSH2_SESSION;

namespace tpush::ssh {

// The message libssh2 keeps for the session's last error ("Unable to send
// FXP_OPEN*", "Channel open failure (connect failed)"); "" when it has none.
std::string last_error(LIBSSH2_SESSION* session);

}  // namespace tpush::ssh
