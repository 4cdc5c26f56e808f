// The scheduler's view of the work for one worker. The real job drives an SSH
// session; tests drive the scheduler with fake jobs and no network.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

#include "tpush/fanout/result.h"
#include "tpush/util/wait.h"

namespace tpush::fanout {

using Clock = std::chrono::steady_clock;
// The clock a run reads: Clock::now, or a test's own.
using Now = std::function<Clock::time_point()>;

class Job {
 public:
  virtual ~Job() = default;
  // Called once to start, then whenever the socket is ready or output drained.
  virtual void advance(Clock::time_point now) = 0;
  // Called about every 100 ms: deadlines and keepalives.
  virtual void tick(Clock::time_point now) = 0;
  // Second Ctrl-C (or SIGTERM): stop now; the result becomes `interrupted`.
  virtual void interrupt() = 0;
  // First Ctrl-C: pass it on to the remote command, keep running.
  virtual void forward_interrupt() {}
  // How much of the shared stdin this job has sent (none: it takes no stdin).
  virtual std::optional<std::uint64_t> input_offset() const { return std::nullopt; }

  virtual bool finished() const = 0;
  virtual int fd() const = 0;                 // -1 when there is nothing to poll
  virtual util::Wait wait() const = 0;         // none while paused for output
  virtual bool paused_for_output() const = 0;
  // True while the connection is being set up (TCP, handshake, auth): the
  // scheduler paces those so a burst does not overflow a server's accept queue.
  virtual bool connecting() const { return false; }
  // While connecting(): when the far side last showed progress (the attempt
  // started, bytes arrived), or `now` while the attempt waits its turn in
  // tpush's own queue (a jump host's channel opens). An attempt silent for
  // long (a blackholed address) stops holding a place among those paced.
  virtual Clock::time_point setup_progress(Clock::time_point now) const { return now; }
  // While connecting(): how many stages of the setup that wait on the far
  // side the attempt has passed (a session: 1 once TCP is answered, 2 once
  // sshd's banner came, 3 once keys are exchanged). The pace's clock
  // (handshake_pace.h).
  virtual std::size_t setup_stage() const { return 0; }
  virtual WorkerResult result() const = 0;
};

}  // namespace tpush::fanout
