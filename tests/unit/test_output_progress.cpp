// The cp/get progress line (output/progress).
#include <doctest/doctest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tpush/commands/copy/copy.h"
#include "tpush/output/progress.h"
#include "tpush/output/writer.h"
#include "tpush/ssh/sftp/download.h"
#include "tpush/ssh/sftp/upload.h"
#include "tpush/util/error.h"
#include "tpush/util/terminal.h"

namespace fs = std::filesystem;
using namespace tpush::commands;

TEST_CASE("progress line: bytes, workers done, slowest first") {
  tpush::output::Progress p({"w0", "w1", "w2"}, 1000, false);
  p.worker(0).started = p.worker(0).done = true;
  p.worker(0).bytes = 1000;
  p.worker(1).started = true;
  p.worker(1).bytes = 100;
  p.worker(2).started = true;
  p.worker(2).bytes = 500;
  const std::string line = p.line(200);
  CHECK(line == "tpush: 1.6 KiB / 2.9 KiB (53%), 1/3 workers done, slowest: w1 10% w2 50%");
  CHECK(p.line(20) == line.substr(0, 19));  // cut to the terminal's width, the last column left free
}

TEST_CASE("progress line: at most three slowest, never a worker done or not started") {
  tpush::output::Progress p({"a", "b", "c", "d", "e", "f"}, 100, false);
  const std::uint64_t bytes[] = {90, 10, 40, 20, 0, 100};
  for (std::size_t i = 0; i < 6; ++i) p.reporter(i)(bytes[i], i == 5);
  p.worker(4).started = false;  // e: not started yet
  CHECK(p.line(200) == "tpush: 260 B / 600 B (43%), 1/6 workers done, slowest: b 10% d 20% c 40%");
}

TEST_CASE("progress line: with no total (get), bytes alone, per worker too") {
  tpush::output::Progress p({"w0", "w1"}, 0, false);
  p.reporter(0)(3 * 1024 * 1024, false);
  p.reporter(1)(512, false);
  CHECK(p.line(200) == "tpush: 3.0 MiB, 0/2 workers done, slowest: w1 512 B w0 3.0 MiB");
}

TEST_CASE("progress line: a worker once done stays done") {
  tpush::output::Progress p({"w0"}, 10, false);
  auto report = p.reporter(0);
  report(10, true);
  report(10, false);  // a late report without the flag
  CHECK(p.worker(0).done);
  CHECK(p.worker(0).started);
  CHECK(p.line(200) == "tpush: 10 B / 10 B (100%), 1/1 workers done");
}

TEST_CASE("progress line: human_bytes") {
  using tpush::output::human_bytes;
  CHECK(human_bytes(0) == "0 B");
  CHECK(human_bytes(1023) == "1023 B");
  CHECK(human_bytes(1024) == "1.0 KiB");
  CHECK(human_bytes(320 * 1024) == "320 KiB");
  CHECK(human_bytes(1536ull * 1024 * 1024) == "1.5 GiB");
  CHECK(human_bytes(5ull << 40) == "5.0 TiB");
}

TEST_CASE("progress line: drawn on stderr in place, at most every redraw interval, erased by clear") {
  int err[2];
  REQUIRE(::pipe(err) == 0);
  const auto t0 = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
  {
    tpush::output::Writer writer(STDOUT_FILENO, err[1]);
    tpush::output::Progress p({"w0"}, 100, true);
    p.reporter(0)(50, false);
    p.poll(writer, t0);
    p.reporter(0)(60, false);
    p.poll(writer, t0 + tpush::util::redraw_interval / 2);  // too soon: not drawn
    p.reporter(0)(70, false);
    p.poll(writer, t0 + tpush::util::redraw_interval);
    p.clear(writer);
    tpush::output::Progress off({"w0"}, 100, false);  // stderr not a terminal: never drawn
    off.poll(writer, t0);
    off.clear(writer);
    writer.drain_and_stop();
  }
  ::close(err[1]);
  std::string got;
  char buf[4096];
  for (ssize_t n; (n = ::read(err[0], buf, sizeof buf)) > 0;) got.append(buf, static_cast<std::size_t>(n));
  ::close(err[0]);
  CHECK(got ==
        "\rtpush: 50 B / 100 B (50%), 0/1 workers done, slowest: w0 50%\033[K"
        "\rtpush: 70 B / 100 B (70%), 0/1 workers done, slowest: w0 70%\033[K"
        "\r\033[K");
}
