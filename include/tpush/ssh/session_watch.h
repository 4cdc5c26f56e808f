// The two rules every SSH session is held to, written once for a worker's
// job (fanout/session_job) and a jump host (ssh/jump_host):
// - the connect deadline: connect, handshake and login within it, counting
//   the far side's time only: not tpush's own stalls (Session::stalled()),
//   nor its wait for a turn in tpush's own queue (Session::waited(), up to
//   one more deadline, so a queue that never moves ends too);
// - silence: a ready session that sends nothing for `alive_count` keepalive
//   intervals is lost. Silence counts from when the peer was last heard, or
//   from when the caller says it began listening (heard()), whichever is later.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "tpush/ssh/session.h"

namespace tpush::ssh {

// tpush's connect deadline when neither --connect-timeout, ssh_config's
// ConnectTimeout nor tpush's config file names one.
inline constexpr std::chrono::seconds kDefaultConnectTimeout{10};

class SessionWatch {
 public:
  SessionWatch(std::chrono::seconds connect_timeout, std::chrono::seconds alive_interval, int alive_count)
      : connect_timeout_(connect_timeout), silence_limit_(alive_interval * alive_count) {}

  // The connect deadline counts from here (the first attempt).
  void start(Clock::time_point now) { started_ = now; }
  // Silence counts from `now` at the earliest: the work began, output that
  // tpush paused resumed, a kept session was taken up again.
  void heard(Clock::time_point now) { heard_ = now; }

  // While `session` is not ready: "connect timed out after 10s (during SSH
  // handshake)" once the deadline passed, else nothing.
  std::optional<std::string> connect_expired(Clock::time_point now, const Session& session) const;
  // While it is ready: "no response for 15s" once it was silent that long,
  // else nothing.
  std::optional<std::string> silence_expired(Clock::time_point now, const Session& session) const;

  std::chrono::seconds connect_timeout() const { return connect_timeout_; }
  std::chrono::seconds silence_limit() const { return silence_limit_; }

 private:
  std::chrono::seconds connect_timeout_;
  std::chrono::seconds silence_limit_;
  Clock::time_point started_{}, heard_{};
};

}  // namespace tpush::ssh
