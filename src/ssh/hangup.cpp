#include "tpush/ssh/hangup.h"

#include <libssh2.h>

namespace tpush::ssh {

bool is_hangup(int rc) {
  return rc == LIBSSH2_ERROR_SOCKET_DISCONNECT || rc == LIBSSH2_ERROR_SOCKET_RECV ||
         rc == LIBSSH2_ERROR_SOCKET_SEND || rc == LIBSSH2_ERROR_SOCKET_TIMEOUT;
}

}  // namespace tpush::ssh
