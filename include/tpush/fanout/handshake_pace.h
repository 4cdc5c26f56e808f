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
// handshakes stay fast as the bound grows, and it doubles every round, up
// to the fan-out.
//
// The scheduler asks window() before starting a worker and reports each
// handshake that completed; an attempt that has heard nothing for
// presumed_lost_after() (a blackholed address) stops holding a place, while
// its own deadline still runs.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

#include "tpush/fanout/job.h"

namespace tpush::fanout {

class HandshakePace {
 public:
  static constexpr std::size_t initial_window = 16;
  static constexpr std::size_t floor_window = 4;
  // A handshake is fast within this many times the fastest one, slow past
  // slow_factor times it (or past a quarter of the deadline).
  static constexpr double fast_factor = 2.0;
  static constexpr double slow_factor = 4.0;
  static constexpr double shrink_to = 0.7;

  explicit HandshakePace(std::size_t ceiling);

  // Handshakes are kept well inside this (the run's shortest connect deadline).
  void keep_within(Clock::duration deadline) { deadline_ = deadline; }

  std::size_t window() const;
  Clock::duration presumed_lost_after() const;

  // A handshake completed, `took` after its attempt started.
  void completed(Clock::duration took, Clock::time_point now);

  // What the pace did, for -v: one line, empty before any handshake completed.
  std::string summary() const;

 private:
  bool fast(Clock::duration took) const;
  bool slow(Clock::duration took) const;
  void end_round(Clock::time_point now);

  std::size_t ceiling_;
  double window_;
  bool slow_start_ = true;
  std::optional<Clock::duration> deadline_;
  std::optional<Clock::duration> fastest_;
  // The round under way: as many completions as the window held when it began.
  std::size_t round_size_;
  std::size_t round_done_ = 0, round_slow_ = 0;
  Clock::duration round_total_{};
  // For the summary.
  std::size_t completions_ = 0, shrinks_ = 0, peak_ = 0;
  Clock::duration total_{};
};

}  // namespace tpush::fanout
