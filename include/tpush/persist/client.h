// The client side of a persist master (master.h): find the master for a set
// of workers (starting one when there is none) and have it run this command
// line with our stdin, stdout, stderr, directory, umask and environment, or
// end it (`tpush disconnect`).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace tpush::persist {

struct RunRequest {
  std::string worker_set;  // what identifies the master (see place.h)
  std::chrono::seconds persist;  // its idle time
  std::vector<std::string> argv;
  // Said on stderr when this run starts a master (empty: nothing): a master
  // nobody asked for explicitly should not go unnoticed.
  std::string notice;
};

// The run's exit code, or nullopt when no master can take it (none could be
// started, every master the worker set may have is busy with a run of its own,
// the environment is too large for one message): then the caller runs it
// directly. Signals read from `signal_fd`
// during the run (Ctrl-C, TERM, HUP) are passed on to the master's run.
std::optional<int> run_through_master(const RunRequest& request, int signal_fd);

struct EndedMaster {
  long pid = 0;
  std::vector<std::string> held;  // "user@host:port (idle 12s)"
};
struct Disconnected {
  std::vector<EndedMaster> ended;
  std::vector<long> busy;  // pids of masters in the middle of a run: left alone
  std::string problem;     // why no master could be asked
};
// Ends the masters for `worker_set` that are not running a command line.
Disconnected disconnect(const std::string& worker_set);

}  // namespace tpush::persist
