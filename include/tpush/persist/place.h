// Where the masters for a set of workers listen: DIR/KEY.sock (and its lock,
// DIR/KEY.lock) for the first, DIR/KEY-2.sock for the second and so on, with
// DIR $XDG_RUNTIME_DIR/tpush when that directory is the user's, else
// /tmp/tpush-UID. The
// directory is made 0700 and must be the user's own, not a link, and closed
// to everyone else; KEY hashes the worker set with this tpush binary's
// identity, so an upgraded tpush never talks to an older master.
#pragma once

#include <filesystem>
#include <string>

namespace tpush::persist {

// How many masters a worker set may have at once. A master runs one command
// line at a time; a run that finds every master busy (one of them tailing logs,
// another running a job in the foreground) starts the next, up to this many;
// past them it runs directly. Each holds its own session to every worker.
constexpr int kMasterSlots = 4;

struct Place {
  std::filesystem::path socket, lock;
  std::string problem;  // why there is no usable place (then the run goes direct)

  // The place of master `k` (0 .. kMasterSlots - 1) of the same worker set,
  // this one being master 0's.
  Place slot(int k) const;
};

// The place of the first master of `worker_set` (Place::slot gives the others).
Place place_for(const std::string& worker_set);

}  // namespace tpush::persist
