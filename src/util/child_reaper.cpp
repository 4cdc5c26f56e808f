#include "tpush/util/child_reaper.h"

#include <algorithm>

namespace tpush::util {

void ChildReaper::adopt(Child child, std::chrono::milliseconds grace) {
  if (child.poll()) return;  // already gone, and reaped now
  child.stop(Clock::now(), grace);
  children_.push_back(std::move(child));
}

void ChildReaper::tick(Clock::time_point now) {
  for (auto& c : children_) c.tick(now);
  std::erase_if(children_, [](const Child& c) { return !c.running(); });
}

}  // namespace tpush::util
