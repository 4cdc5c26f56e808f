#include "tpush/ssh/session_watch.h"

#include <algorithm>

#include "tpush/util/string.h"

namespace tpush::ssh {

std::optional<std::string> SessionWatch::connect_expired(Clock::time_point now, const Session& session) const {
  const auto waited = std::min<Clock::duration>(session.waited(), connect_timeout_);
  if (now - started_ - session.stalled() - waited < connect_timeout_) return std::nullopt;
  return "connect timed out after " + util::seconds_text(connect_timeout_) + " (" +
         (session.waiting_turn() ? "still waiting for a channel of its jump host" : session.phase_name()) + ")";
}

std::optional<std::string> SessionWatch::silence_expired(Clock::time_point now, const Session& session) const {
  const auto last = std::max(session.heard_from(), heard_);
  if (now - last < silence_limit_) return std::nullopt;
  return "no response for " + util::seconds_text(std::chrono::duration_cast<std::chrono::seconds>(now - last));
}

}  // namespace tpush::ssh
