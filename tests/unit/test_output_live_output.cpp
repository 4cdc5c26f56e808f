// One worker's output as the live view keeps it: the last line for its row,
// and its recent lines within a bound (output/live/output).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tpush/output/live/output.h"

namespace {

using tpush::fanout::Stream;
using tpush::output::LiveOutput;

// The kept lines as "1:text" (stdout) and "2:text" (stderr).
std::vector<std::string> live_kept(const LiveOutput& o) {
  std::vector<std::string> out;
  for (const auto& line : o.lines())
    out.push_back((line.stream == Stream::out ? "1:" : "2:") + std::string(line.text));
  return out;
}

}  // namespace

TEST_CASE("live output: the last line is the latest, finished or not") {
  LiveOutput o(1 << 20);
  CHECK(o.last_line() == "");
  o.append(Stream::out, "start\n");
  CHECK(o.last_line() == "start");
  o.append(Stream::out, "work");  // a partial line shows as it grows
  CHECK(o.last_line() == "work");
  o.append(Stream::out, "ing...\n\n");  // an empty line does not blank the row
  CHECK(o.last_line() == "working...");
  o.append(Stream::err, "warn");
  CHECK(o.last_line() == "warn");
  o.append(Stream::out, "done\n");
  CHECK(o.last_line() == "done");
}

TEST_CASE("live output: carriage returns leave the latest state of a progress bar") {
  LiveOutput o(1 << 20);
  o.append(Stream::out, "10%\r20%\r");
  CHECK(o.last_line() == "20%");
  o.append(Stream::out, "30%");
  CHECK(o.last_line() == "30%");
  o.append(Stream::out, "\r\n");
  CHECK(o.last_line() == "30%");
  o.append(Stream::out, "ok\r\n");  // pty line ends
  CHECK(o.last_line() == "ok");
}

TEST_CASE("live output: lines keep their stream and order, unfinished ones last") {
  LiveOutput o(1 << 20);
  o.append(Stream::out, "a\nb");
  o.append(Stream::err, "e1\ne");
  o.append(Stream::out, "c\n");
  CHECK(live_kept(o) == std::vector<std::string>{"1:a", "2:e1", "1:bc", "2:e"});
  const auto generation = o.generation();
  o.end();
  CHECK(o.generation() != generation);
  CHECK(live_kept(o) == std::vector<std::string>{"1:a", "2:e1", "1:bc", "2:e"});
  CHECK(o.last_line() == "e");
}

TEST_CASE("live output: past the bound the oldest lines go, and the count of dropped bytes says so") {
  LiveOutput o(100);  // each line "line NN\n" is 8 bytes, kept with a 1-byte tag
  for (int i = 10; i < 60; ++i) o.append(Stream::out, "line " + std::to_string(i) + "\n");
  const auto kept = live_kept(o);
  REQUIRE(!kept.empty());
  CHECK(kept.back() == "1:line 59");
  CHECK(kept.size() == 100 / 9);  // the newest lines that fit
  CHECK(kept.front() == "1:line " + std::to_string(60 - kept.size()));
  CHECK(o.dropped_bytes() == (50 - kept.size()) * 8);
  CHECK(o.memory() < 400);
}

TEST_CASE("live output: a line longer than the longest kept is kept in pieces") {
  LiveOutput o(1 << 20);
  o.append(Stream::out, std::string(LiveOutput::kMaxLine + 10, 'x'));
  o.append(Stream::out, "y\n");
  const auto lines = o.lines();
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].text.size() == LiveOutput::kMaxLine);
  CHECK(lines[1].text == std::string(10, 'x') + "y");
}

TEST_CASE("live output: a megabyte in one chunk keeps the bound") {
  LiveOutput o(64 * 1024);
  std::string chunk;
  for (int i = 0; i < 100000; ++i) chunk += std::to_string(i) + "\n";
  o.append(Stream::out, chunk);
  CHECK(o.last_line() == "99999");
  std::size_t kept = 0;
  for (const auto& line : o.lines()) kept += line.text.size() + 1;
  CHECK(kept <= 64 * 1024);
  CHECK(kept > 50 * 1024);  // the bound counts a byte per line more than this
  CHECK(o.dropped_bytes() + kept == chunk.size());  // every byte either kept or counted as dropped
  CHECK(o.memory() <= 3 * 64 * 1024);
  CHECK(o.lines().back().text == "99999");
  CHECK(o.lines().front().text == std::to_string(100000 - o.lines().size()));
}
