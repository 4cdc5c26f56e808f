// Where the master for a set of workers listens: DIR/KEY.sock (and its lock,
// DIR/KEY.lock), with DIR $XDG_RUNTIME_DIR/tpush when that directory is the
// user's, else /tmp/tpush-UID. The
// directory is made 0700 and must be the user's own, not a link, and closed
// to everyone else; KEY hashes the worker set with this tpush binary's
// identity, so an upgraded tpush never talks to an older master.
#pragma once

#include <filesystem>
#include <string>

namespace tpush::persist {

struct Place {
  std::filesystem::path socket, lock;
  std::string problem;  // why there is no usable place (then the run goes direct)
};

Place place_for(const std::string& worker_set);

}  // namespace tpush::persist
