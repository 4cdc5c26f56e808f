// What happened on one worker: a value, never an exception.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace tpush::fanout {

enum class Outcome {
  ok,           // command ran and exited 0
  failed,       // command ran and exited non-zero, or was killed by a signal
  unreachable,  // connect, host key or authentication failed
  timed_out,    // connect deadline or command deadline passed
  lost,         // connection dropped or went silent mid-command
  interrupted,  // tpush was interrupted while this worker ran
  not_started,  // tpush stopped before this worker was started
  stopped,      // tpush stopped it because another worker failed (--fail-fast)
};

inline constexpr int kOutcomes = 8;

// "ok", "failed", "unreachable", "timed_out", "lost", "interrupted",
// "not_started", "stopped": as --json and the run records name them.
const char* outcome_name(Outcome o);
// The outcome of that name, or nullopt.
std::optional<Outcome> outcome_from_name(std::string_view name);

struct WorkerResult {
  Outcome outcome = Outcome::not_started;
  int exit_status = -1;   // remote exit status, when the command finished
  std::string reason;     // what the summary prints, e.g. "exit 3", "connect refused"
  double seconds = 0;     // wall time from start to finish for this worker
  bool reached = false;   // a TCP connection to the worker was established
  std::string signal;     // the signal that killed the remote command ("KILL"), if one did
  std::chrono::system_clock::time_point started{};  // when the worker was started (set by its job)
};

}  // namespace tpush::fanout
