#include "tpush/ssh/session.h"

#include <utility>

#include "tpush/ssh/connection.h"

namespace tpush::ssh {

const char* Session::phase_name() const {
  switch (phase()) {
    case Phase::resolve: return "resolving the host name";
    case Phase::connect: return "waiting for TCP connect";
    case Phase::handshake: return "during SSH handshake";
    case Phase::host_key: return "checking the host key";
    case Phase::auth: return "during authentication";
    case Phase::ready: return "connected";
    case Phase::failed: return "failed";
  }
  return "?";
}

std::unique_ptr<Session> open_session(Endpoint endpoint, const ConnectionSettings& settings) {
  if (settings.make_session) return settings.make_session(std::move(endpoint), settings);
  return std::make_unique<Connection>(std::move(endpoint), settings);
}

}  // namespace tpush::ssh
