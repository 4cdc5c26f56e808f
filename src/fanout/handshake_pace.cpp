#include "tpush/fanout/handshake_pace.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

namespace tpush::fanout {
namespace {

double secs(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// An attempt that has heard nothing for this long holds no place in the
// window, whatever the handshakes so far took.
constexpr auto kPresumedLostAtLeast = std::chrono::seconds(2);

void keep_fastest(std::optional<Clock::duration>& fastest, Clock::duration took) {
  fastest = fastest ? std::min(*fastest, took) : took;
}

// Within an eighth of the fastest: as long as the network makes it, whatever
// the load, so not held to the deadline's parts.
bool network_bound(Clock::duration took, Clock::duration fastest) { return took <= fastest + fastest / 8; }

}  // namespace

HandshakePace::HandshakePace(std::size_t ceiling)
    : ceiling_(std::max<std::size_t>(ceiling, 1)),
      window_(static_cast<double>(std::min(initial_window, ceiling_))),
      round_size_(static_cast<std::size_t>(window_)),
      peak_(round_size_) {}

std::size_t HandshakePace::window() const {
  return std::min(ceiling_, std::max<std::size_t>(1, static_cast<std::size_t>(window_)));
}

Clock::duration HandshakePace::presumed_lost_after() const {
  const Clock::duration floor = kPresumedLostAtLeast;
  if (!fastest_) return floor;
  return std::max(floor, std::chrono::duration_cast<Clock::duration>(*fastest_ * slow_factor));
}

// Handshakes are kept well inside the deadline, but round trips to a pod far
// away take what they take however many are under way: one about as fast as
// the fastest is judged by the fastest alone, whatever its length.
bool HandshakePace::fast(Clock::duration took, Clock::duration fastest, double factor) const {
  if (deadline_ && took * 8 > *deadline_ && !network_bound(took, fastest)) return false;
  return took <= std::chrono::duration_cast<Clock::duration>(fastest * factor);
}

bool HandshakePace::slow(Clock::duration took) const {
  if (deadline_ && took * 4 > *deadline_ && !network_bound(took, *fastest_)) return true;
  return took > std::chrono::duration_cast<Clock::duration>(*fastest_ * slow_factor);
}

// One more at once in slow start; after a slowdown, one more a round.
void HandshakePace::grow() {
  window_ = std::min<double>(static_cast<double>(ceiling_), window_ + (slow_start_ ? 1.0 : 1.0 / window_));
  peak_ = std::max(peak_, window());
}

// Only slow start is clocked by stages, and only while they stay fast: once
// the server queues, the bound grows a handshake at a time, and rounds of whole
// handshakes judge the load.
void HandshakePace::progressed(std::size_t stage, Clock::duration took) {
  if (stage >= stage_fastest_.size()) stage_fastest_.resize(stage + 1);
  auto& fastest = stage_fastest_[stage];
  keep_fastest(fastest, took);
  spdlog::trace("pace: a handshake passed stage {} in {:.3f} s (the fastest {:.3f} s)", stage, secs(took),
                secs(*fastest));
  if (stage < 2 || !stage_fastest_[1] || !slow_start_ || !stage_clock_) return;
  const auto round_trip = *stage_fastest_[1];
  if (*fastest > round_trip * network_stage) return;  // the server's work, not the network's
  if (fast(took, *fastest, stage_fast_factor)) grow();
  else ++run_slow_stages_;
  if (++run_stages_ < stage_run) return;
  if (run_slow_stages_ * 2 > run_stages_) {
    stage_clock_ = false;
    spdlog::debug("pace: {} of the last {} handshake stages took over {:.2f} times the fastest: {} at once, "
                  "grown by whole handshakes from here",
                  run_slow_stages_, run_stages_, stage_fast_factor, window());
  }
  run_stages_ = run_slow_stages_ = 0;
}

void HandshakePace::completed(Clock::duration took, Clock::time_point now) {
  keep_fastest(fastest_, took);
  ++completions_;
  total_ += took;
  ++round_done_;
  round_total_ += took;
  if (slow(took)) ++round_slow_;
  else if (fast(took, *fastest_, fast_factor)) grow();
  if (round_done_ >= round_size_) end_round(now);
}

// Most of the round slow: the far side is queueing our handshakes, so fewer
// at once (at most once a round, as TCP halves once per round trip).
void HandshakePace::end_round(Clock::time_point) {
  const std::size_t before = round_size_;
  const double mean = secs(round_total_) / static_cast<double>(round_done_);
  spdlog::trace("pace: a round of {} handshakes, {} slow, mean {:.3f} s; {} at once", round_done_, round_slow_, mean,
                window());
  if (round_slow_ * 2 > round_done_) {
    window_ = std::max<double>(static_cast<double>(floor_window), std::floor(window_ * shrink_to));
    slow_start_ = false;
    ++shrinks_;
    spdlog::debug("pace: {} of the last {} handshakes were slow (mean {:.2f} s, the fastest {:.3f} s{}): {} -> {} at once",
                  round_slow_, round_done_, mean, secs(*fastest_),
                  deadline_ ? fmt::format(", deadline {:.0f} s", secs(*deadline_)) : std::string(), before, window());
  } else if (slow_start_ && window() > before) {
    spdlog::debug("pace: handshakes take {:.2f} s (the fastest {:.3f} s): {} -> {} at once", mean, secs(*fastest_),
                  before, window());
  }
  round_size_ = std::max<std::size_t>(1, window());
  round_done_ = round_slow_ = 0;
  round_total_ = {};
}

std::string HandshakePace::summary() const {
  if (completions_ == 0) return {};
  return fmt::format("pace: {} handshakes, mean {:.2f} s, the fastest {:.3f} s; {} at once at the peak, {} at the end{}",
                     completions_, secs(total_) / static_cast<double>(completions_), secs(*fastest_), peak_,
                     window(), shrinks_ ? fmt::format(" ({} slowdowns)", shrinks_) : std::string());
}

}  // namespace tpush::fanout
