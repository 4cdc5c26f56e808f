// The live view's model: states, times, last lines, counts and the order of
// the rows (output/live/rows).
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

#include "tpush/fanout/result.h"
#include "tpush/output/live/rows.h"

namespace {

using tpush::fanout::Outcome;
using tpush::fanout::Stream;
using tpush::fanout::WorkerResult;
using tpush::output::LiveRows;
using namespace std::chrono_literals;

std::vector<std::string> live_labels(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back("w" + std::to_string(i));
  return out;
}

WorkerResult live_result(Outcome o, int status = -1, std::string reason = "", double seconds = 1.0) {
  WorkerResult r;
  r.outcome = o;
  r.exit_status = status;
  r.reason = std::move(reason);
  r.seconds = seconds;
  return r;
}

}  // namespace

TEST_CASE("live rows: failures first, then stragglers longest first, then the rest in worker order") {
  LiveRows rows(live_labels(8), 1 << 16);
  const auto t0 = LiveRows::Clock::time_point{} + 100s;
  CHECK(rows.order() == std::vector<std::size_t>{0, 1, 2, 3, 4, 5, 6, 7});  // all waiting
  rows.started(6, t0);
  rows.started(2, t0 + 1s);
  rows.started(4, t0 + 2s);
  rows.started(0, t0 + 3s);
  rows.finished(4, live_result(Outcome::ok, 0), t0 + 4s);
  rows.finished(0, live_result(Outcome::failed, 3, "exit 3"), t0 + 5s);
  rows.finished(7, live_result(Outcome::not_started), t0 + 5s);
  // failures 0, 7; running 6 (since t0), 2 (t0+1s); the rest 1, 3, 4 (ok), 5
  CHECK(rows.order() == std::vector<std::size_t>{0, 7, 6, 2, 1, 3, 4, 5});
  // A worker's output alone never moves rows.
  rows.data(5, Stream::out, "x\n");
  CHECK(rows.order() == std::vector<std::size_t>{0, 7, 6, 2, 1, 3, 4, 5});
  rows.finished(6, live_result(Outcome::ok, 0), t0 + 6s);
  CHECK(rows.order() == std::vector<std::size_t>{0, 7, 2, 1, 3, 4, 5, 6});
  CHECK(rows.order_shown() == rows.order());
}

TEST_CASE("live rows: what the state and exit columns say") {
  LiveRows rows(live_labels(10), 1 << 16);
  const auto t = LiveRows::Clock::time_point{} + 1s;
  CHECK(rows.state_text(0) == "waiting");
  CHECK(rows.exit_text(0) == "");
  rows.started(0, t);
  CHECK(rows.state_text(0) == "connecting");
  rows.connected(0);
  CHECK(rows.state_text(0) == "running");
  rows.finished(0, live_result(Outcome::ok, 0), t);
  CHECK(rows.state_text(0) == "ok");
  CHECK(rows.exit_text(0) == "0");
  rows.finished(1, live_result(Outcome::failed, 42, "exit 42"), t);
  CHECK(rows.state_text(1) == "exit 42");
  CHECK(rows.exit_text(1) == "42");
  WorkerResult killed = live_result(Outcome::failed, 0, "killed by signal KILL");
  killed.signal = "KILL";
  rows.finished(2, killed, t);
  CHECK(rows.state_text(2) == "signal KILL");
  CHECK(rows.exit_text(2) == "KILL");
  rows.finished(3, live_result(Outcome::unreachable, -1, "connect refused"), t);
  CHECK(rows.state_text(3) == "unreachable");
  CHECK(rows.exit_text(3) == "");
  rows.finished(4, live_result(Outcome::timed_out), t);
  CHECK(rows.state_text(4) == "timed out");
  rows.finished(5, live_result(Outcome::lost), t);
  CHECK(rows.state_text(5) == "lost");
  rows.finished(6, live_result(Outcome::interrupted, 130), t);
  CHECK(rows.state_text(6) == "interrupted");
  CHECK(rows.exit_text(6) == "130");
  rows.finished(7, live_result(Outcome::not_started), t);
  CHECK(rows.state_text(7) == "not started");
  rows.finished(8, live_result(Outcome::stopped), t);
  CHECK(rows.state_text(8) == "stopped");
}

TEST_CASE("live rows: times, whole seconds while running and tenths once done") {
  LiveRows rows(live_labels(3), 1 << 16);
  const auto t0 = LiveRows::Clock::time_point{} + 1s;
  CHECK(rows.time_text(0, t0) == "");
  rows.started(0, t0);
  CHECK(rows.time_text(0, t0 + 7900ms) == "7s");
  CHECK(rows.time_text(0, t0 + 65s) == "1m05s");
  CHECK(rows.time_text(0, t0 + 2h + 3min) == "2h03m");
  rows.finished(0, live_result(Outcome::ok, 0, "", 2.34), t0 + 3s);
  CHECK(rows.time_text(0, t0 + 100s) == "2.3s");  // the clock stops
  rows.finished(1, live_result(Outcome::not_started, -1, "", 0), t0);
  CHECK(rows.time_text(1, t0 + 5s) == "");
}

TEST_CASE("live rows: the last line is escaped, a silent failure shows its reason") {
  LiveRows rows(live_labels(3), 1 << 16);
  const auto t = LiveRows::Clock::time_point{} + 1s;
  rows.started(0, t);
  rows.data(0, Stream::out, "step 1\n\033[31mstep\033[0m 2\033[2J\n");
  CHECK(rows.last_text(0) == "step 2^[[2J");
  rows.data(0, Stream::out, "50%\r60%");
  CHECK(rows.last_text(0) == "60%");
  rows.finished(1, live_result(Outcome::unreachable, -1, "connect refused"), t);
  CHECK(rows.last_text(1) == "connect refused");
  rows.finished(2, live_result(Outcome::ok, 0), t);
  CHECK(rows.last_text(2) == "");
}

TEST_CASE("live rows: the header counts what is not zero") {
  LiveRows rows(live_labels(6), 1 << 16);
  const auto t = LiveRows::Clock::time_point{} + 1s;
  CHECK(rows.counts_text() == "6 waiting");
  rows.started(0, t);
  rows.started(1, t);
  rows.started(2, t);
  rows.finished(1, live_result(Outcome::ok, 0), t);
  rows.finished(2, live_result(Outcome::failed, 1), t);
  rows.finished(3, live_result(Outcome::unreachable), t);
  CHECK(rows.counts_text() == "1 connecting, 1 ok, 1 failed, 1 unreachable, 2 waiting");
  rows.connected(0);
  CHECK(rows.counts_text() == "1 running, 1 ok, 1 failed, 1 unreachable, 2 waiting");
  CHECK(rows.running() == 1);
}

TEST_CASE("live rows: output kept per worker is 1 MiB, shared out past 256 workers, never under 64 KiB") {
  CHECK(LiveRows::output_bound(1) == 1024 * 1024);
  CHECK(LiveRows::output_bound(256) == 1024 * 1024);
  CHECK(LiveRows::output_bound(1024) == 256 * 1024);
  CHECK(LiveRows::output_bound(100000) == 64 * 1024);
  LiveRows rows(live_labels(2), 4096);
  rows.data(0, Stream::out, std::string(10000, 'a') + "\n" + "tail\n");
  CHECK(rows.output(0).dropped_bytes() == 10001);
  CHECK(rows.output(1).lines().empty());
}
