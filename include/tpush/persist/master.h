// The persist master: a background tpush that keeps one user's sessions to
// one set of workers (ssh/kept_sessions.h) and runs later invocations itself,
// on those sessions, with the client's stdin, stdout, stderr, working
// directory, umask and environment (passed over its socket), so a run through
// it behaves as a direct run does. One run at a time: a client that comes
// meanwhile hears "busy" and runs directly. It ends after its idle time, on
// `tpush disconnect`, or on SIGTERM or SIGHUP.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tpush/fanout/run_host.h"

namespace tpush::persist {

// Runs one tpush command line as main would, on the master's sessions.
using RunCommandLine = std::function<int(const std::vector<std::string>& argv, const fanout::RunHost& host)>;

// The first argument of the argv a client starts a master with:
//   tpush --persist-master SOCKET LOCK IDLE_SECONDS READY_FD
// (never typed by a user). The master writes "ok" to READY_FD once it listens,
// or when another master already holds LOCK.
inline constexpr const char* kMasterFlag = "--persist-master";

// Serves until idle, disconnected or terminated; returns the exit code.
int serve(const std::vector<std::string>& args, const RunCommandLine& run);

}  // namespace tpush::persist
