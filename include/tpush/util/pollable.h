// Something the event loop drives besides the per-worker jobs: a jump host's
// session that carries many workers' tunnels, the reaper of child processes.
// It registers with a Reactor (the scheduler implements one) when it starts,
// and leaves when it ends.
#pragma once

#include <chrono>

#include "tpush/util/wait.h"

namespace tpush::util {

class Pollable {
 public:
  using Clock = std::chrono::steady_clock;
  virtual ~Pollable() = default;
  // The fd to watch (-1: nothing to watch, only ticked) and for what.
  virtual int fd() const = 0;
  virtual Wait wait() const = 0;
  // The fd is ready (or a tick wants it driven): go as far as possible.
  virtual void advance(Clock::time_point now) = 0;
  // About every 100 ms: deadlines, keepalives, escalations.
  virtual void tick(Clock::time_point now) = 0;
};

class Reactor {
 public:
  virtual ~Reactor() = default;
  // Starts driving `p` (idempotent); it must stay alive until removed.
  virtual void add(Pollable& p) = 0;
  virtual void remove(Pollable& p) = 0;
  // Brings the watch of `p` in line with its fd() and wait() after a change
  // made outside the loop's own calls.
  virtual void update(Pollable& p) = 0;
};

}  // namespace tpush::util
