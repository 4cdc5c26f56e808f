// How many workers may set up their connections at once, found while the run
// goes, as TCP finds its congestion window: the bound grows while handshakes
// complete about as fast as the fastest one did, and shrinks when most of a
// round's take several times that, or a good part of the connect deadline.
//
// Why: a worker's connect deadline should measure that worker. When tpush
// starts more handshakes than the far side can serve (one sshd for many
// addresses, a bastion, a loaded pod), they queue there, each one's deadline
// runs while it waits behind the others, and workers fail "connect timed out"
// for load tpush itself made. Beyond what saturates the servers, more
// handshakes at once only add waiting, so a bound that keeps the queue short
// costs no time. Where every worker has its own server (a real pod),
// handshakes stay fast as the bound grows, and it grows up to the fan-out.
//
// Far from the workers, slow start is also clocked by the stages of
// handshakes, as TCP's window is by ACKs. A handshake is some eight round
// trips, so doubling once per handshake holds back a laptop 150 ms from its
// pod for seconds. The first stage, TCP's connect, is answered by the
// server's kernel: one round trip, whatever sshd's load. A later stage
// (sshd's banner: a round trip and sshd's start; the key exchange: two to
// four round trips) that takes about as long as that stage's fastest adds one
// to the bound, if the fastest was a few round trips. On loopback a stage is
// sshd's CPU, hundreds of round trips, and only whole handshakes grow the
// bound; so too behind a proxy that answers the connect itself (a
// ProxyCommand, an IAP tunnel).
//
// The scheduler asks window() before starting a worker and reports each stage
// passed and each handshake that completed; an attempt that has heard nothing
// for presumed_lost_after() (a blackholed address) stops holding a place,
// while its own deadline still runs.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "tpush/fanout/job.h"

namespace tpush::fanout {

class HandshakePace {
 public:
  static constexpr std::size_t initial_window = 16;
  static constexpr std::size_t floor_window = 4;
  // A handshake is fast within this many times the fastest one (and an
  // eighth of the deadline), slow past slow_factor times it (or a quarter of
  // the deadline); one within an eighth of the fastest is never held to the
  // deadline's parts: its length is the network's.
  static constexpr double fast_factor = 2.0;
  static constexpr double slow_factor = 4.0;
  static constexpr double shrink_to = 0.7;
  // A later stage is fast within stage_fast_factor times that stage's
  // fastest, if that was within network_stage round trips. When most of a run
  // of stage_run stages were not fast (the server queues), the stages grow the
  // bound no more: whole handshakes judge it, for the rest of the run.
  static constexpr double stage_fast_factor = 1.25;
  static constexpr double network_stage = 8.0;
  static constexpr std::size_t stage_run = 8;

  explicit HandshakePace(std::size_t ceiling);

  // Handshakes are kept well inside this (the run's shortest connect deadline).
  void keep_within(Clock::duration deadline) { deadline_ = deadline; }

  std::size_t window() const;
  Clock::duration presumed_lost_after() const;

  // A handshake under way passed its `stage`, `took` after the stage before
  // it: 1 is TCP's connect, later ones are the job's (Job::setup_stage()).
  void progressed(std::size_t stage, Clock::duration took);
  // A handshake completed, `took` after its attempt started.
  void completed(Clock::duration took, Clock::time_point now);

  // What the pace did, for -v: one line, empty before any handshake completed.
  std::string summary() const;

 private:
  // Within `factor` times `fastest`, and an eighth of the deadline unless
  // within an eighth of `fastest`.
  bool fast(Clock::duration took, Clock::duration fastest, double factor) const;
  bool slow(Clock::duration took) const;
  void grow();
  void end_round(Clock::time_point now);

  std::size_t ceiling_;
  double window_;
  bool slow_start_ = true;
  std::optional<Clock::duration> deadline_;
  std::optional<Clock::duration> fastest_;
  std::vector<std::optional<Clock::duration>> stage_fastest_;  // by stage; [1]: a round trip
  bool stage_clock_ = true;
  std::size_t run_stages_ = 0, run_slow_stages_ = 0;
  // The round under way: as many completions as the window held when it began.
  std::size_t round_size_;
  std::size_t round_done_ = 0, round_slow_ = 0;
  Clock::duration round_total_{};
  // For the summary.
  std::size_t completions_ = 0, shrinks_ = 0, peak_ = 0;
  Clock::duration total_{};
};

}  // namespace tpush::fanout
