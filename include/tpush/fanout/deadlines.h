// The time limits every worker job keeps (--connect-timeout, -u, --alive-interval).
// How a session is held to the connect deadline and to silence is
// ssh/session_watch.h, which jump hosts share.
#pragma once

#include <chrono>
#include <optional>

#include "tpush/ssh/session_watch.h"

namespace tpush::fanout {

struct Deadlines {
  std::chrono::seconds connect{ssh::kDefaultConnectTimeout};  // connect + handshake + auth
  std::optional<std::chrono::seconds> command;  // from the start of the work to its end; none = no limit
  std::chrono::seconds alive_interval{ssh::kDefaultAliveInterval};  // keepalive period
  int alive_count = ssh::kDefaultAliveCount;                         // silent periods before "lost"

  // The watch a session of these deadlines is held to.
  ssh::SessionWatch watch() const { return {connect, alive_interval, alive_count}; }
};

}  // namespace tpush::fanout
