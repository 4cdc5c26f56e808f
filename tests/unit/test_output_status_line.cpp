// The status line's text: counts, and the worker running longest.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tpush/output/status_line.h"

using tpush::output::StatusLine;

TEST_CASE("status_line: done, failed, running, and the slowest running worker") {
  using namespace std::chrono_literals;
  const std::vector<std::string> labels = {"w0", "w1", "w2", "w3"};
  StatusLine s(labels, false);
  const auto t0 = StatusLine::Clock::time_point{} + 100s;
  s.begin_run(4, t0);
  s.started(0, t0);
  s.started(1, t0 + 1s);
  s.started(2, t0 + 2s);
  CHECK(s.line(t0 + 5s, 200) == "tpush: 0/4 done, 3 running; slowest w0 (5 s)");
  s.finished(0, true);
  s.finished(2, false);
  CHECK(s.line(t0 + 41s, 200) == "tpush: 2/4 done, 1 failed, 1 running; slowest w1 (40 s)");
  s.finished(1, true);
  CHECK(s.line(t0 + 42s, 200) == "tpush: 3/4 done, 1 failed, 0 running");
  CHECK(s.line(t0 + 42s, 12) == "tpush: 3/4 ");  // cut to the terminal, the last column left free
}
