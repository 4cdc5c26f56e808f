// Children tpush is done with (a worker's proxy command when the worker ends):
// TERM to their group at once, KILL after a grace from a later tick, reaped
// without ever blocking the event loop. What is left when the reaper goes is
// killed and reaped then.
#pragma once

#include <chrono>
#include <vector>

#include "tpush/util/child_process.h"
#include "tpush/util/pollable.h"

namespace tpush::util {

class ChildReaper final : public Pollable {
 public:
  static constexpr std::chrono::milliseconds default_grace{2000};

  ChildReaper() = default;
  ChildReaper(const ChildReaper&) = delete;
  ChildReaper& operator=(const ChildReaper&) = delete;
  ~ChildReaper() override = default;  // each Child kills and reaps what still runs

  // Takes `child` over: TERM now (unless it already exited), KILL after `grace`.
  void adopt(Child child, std::chrono::milliseconds grace = default_grace);
  std::size_t pending() const { return children_.size(); }

  int fd() const override { return -1; }
  Wait wait() const override { return Wait::none; }
  void advance(Clock::time_point now) override { tick(now); }
  void tick(Clock::time_point now) override;

 private:
  std::vector<Child> children_;
};

}  // namespace tpush::util
