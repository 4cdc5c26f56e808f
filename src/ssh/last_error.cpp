#include "tpush/ssh/last_error.h"

#include <libssh2.h>

namespace tpush::ssh {

std::string last_error(LIBSSH2_SESSION* session) {
  if (!session) return {};
  char* msg = nullptr;
  int len = 0;
  libssh2_session_last_error(session, &msg, &len, 0);
  return msg && len > 0 ? std::string(msg, static_cast<std::size_t>(len)) : std::string();
}

}  // namespace tpush::ssh
