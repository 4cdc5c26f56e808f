// What a persist master (persist/master.h) lends each run it serves: the
// sessions it keeps between runs, and what the run's event loop must drive
// meanwhile (the master's own socket, which tells other clients it is busy;
// the client's connection, whose end stops the run as a hang-up would).
#pragma once

#include <sys/types.h>

#include <vector>

#include "tpush/util/pollable.h"

namespace tpush::ssh {
class KeptSessions;
}

namespace tpush::fanout {

struct RunHost {
  ssh::KeptSessions* pool = nullptr;
  std::vector<util::Pollable*> services;
  pid_t client = 0;  // the tpush the user started, whose run this is
  int terminal = -1; // that tpush's terminal (passphrases, --live); -1: /dev/tty
};

}  // namespace tpush::fanout
