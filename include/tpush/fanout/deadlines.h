// The time limits every worker job keeps (--connect-timeout, -u, --alive-interval).
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace tpush::fanout {

struct Deadlines {
  std::chrono::seconds connect{10};             // connect + handshake + auth
  std::optional<std::chrono::seconds> command;  // from the start of the work to its end; none = no limit
  std::chrono::seconds alive_interval{5};       // keepalive period
  int alive_count = 3;                          // silent periods before "lost"

  // How long a worker may send nothing before it is lost.
  std::chrono::seconds silence_limit() const { return alive_interval * alive_count; }
};

// "12s", for messages.
inline std::string seconds_text(std::chrono::seconds s) { return std::to_string(s.count()) + "s"; }

}  // namespace tpush::fanout
