// What the live view puts on the screen and what its keys do, drawn on a grid
// of text instead of a terminal (output/live/layout).
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

#include "tpush/fanout/result.h"
#include "tpush/output/live/layout.h"
#include "tpush/output/live/text.h"

namespace {

using tpush::fanout::Outcome;
using tpush::fanout::Stream;
using tpush::output::LiveCanvas;
using tpush::output::LiveFrame;
using tpush::output::LiveKey;
using tpush::output::LiveList;
using tpush::output::LivePager;
using tpush::output::LiveRows;
using tpush::output::LiveStyle;
using namespace std::chrono_literals;

// A screen of rows x columns cells, one UTF-8 character (or ' ') each.
class LiveGrid final : public LiveCanvas {
 public:
  LiveGrid(int rows, int columns) : rows_(rows), columns_(columns) { clear(); }
  int rows() const override { return rows_; }
  int columns() const override { return columns_; }
  void clear() override {
    cells_.assign(static_cast<std::size_t>(rows_), std::vector<std::string>(static_cast<std::size_t>(columns_), " "));
  }
  void put(int y, int x, std::string_view text, LiveStyle) override {
    REQUIRE(y >= 0);
    REQUIRE(y < rows_);
    REQUIRE(tpush::output::live_columns(text) + static_cast<std::size_t>(x) <= static_cast<std::size_t>(columns_));
    for (std::size_t i = 0; i < text.size();) {
      std::size_t n = 1;
      while (i + n < text.size() && (static_cast<unsigned char>(text[i + n]) & 0xc0) == 0x80) ++n;
      cells_[static_cast<std::size_t>(y)][static_cast<std::size_t>(x++)] = std::string(text.substr(i, n));
      i += n;
    }
  }
  void fill(int, LiveStyle) override {}
  // Row y as text, trailing blanks dropped.
  std::string line(int y) const {
    std::string out;
    for (const auto& cell : cells_[static_cast<std::size_t>(y)]) out += cell;
    return out.erase(out.find_last_not_of(' ') + 1);
  }
  bool shows(std::string_view text) const {
    for (int y = 0; y < rows_; ++y)
      if (line(y).find(text) != std::string::npos) return true;
    return false;
  }

 private:
  int rows_, columns_;
  std::vector<std::vector<std::string>> cells_;
};

std::vector<std::string> live_layout_labels(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back("host" + std::to_string(i));
  return out;
}

tpush::fanout::WorkerResult live_layout_result(Outcome o, int status, std::string reason) {
  tpush::fanout::WorkerResult r;
  r.outcome = o;
  r.exit_status = status;
  r.reason = std::move(reason);
  r.seconds = 1.5;
  return r;
}

const auto kLiveT0 = LiveRows::Clock::time_point{} + 1000s;

}  // namespace

TEST_CASE("live layout: header counts, one row per worker, failures on top, keys in the footer") {
  LiveRows rows(live_layout_labels(4), 1 << 16);
  for (std::size_t w = 0; w < 4; ++w) {
    rows.started(w, kLiveT0);
    rows.connected(w);
  }
  rows.data(0, Stream::out, "start\ndone 0\n");
  rows.finished(0, live_layout_result(Outcome::ok, 0, ""), kLiveT0 + 1s);
  rows.data(2, Stream::err, "oops\n");
  rows.finished(2, live_layout_result(Outcome::failed, 1, "exit 1"), kLiveT0 + 1s);
  LiveGrid grid(8, 80);
  LiveList list;
  LiveFrame frame{kLiveT0 + 3s, 3.0, false, ""};
  draw_live_list(grid, rows, list, frame);
  CHECK(grid.line(0).find("tpush --live: 4 workers: 2 running, 1 ok, 1 failed") == 0);
  CHECK(grid.line(0).find("3.0s") != std::string::npos);
  CHECK(grid.line(1).find("WORKER") == 0);
  CHECK(grid.line(1).find("LAST LINE") != std::string::npos);
  // label (6 columns: "WORKER"), state (11), time (6, right), exit (4, right), last line
  CHECK(grid.line(2) == "host2   exit 1         1.5s     1  oops");
  CHECK(grid.line(3) == "host1   running          3s");
  CHECK(grid.line(4) == "host3   running          3s");
  CHECK(grid.line(5) == "host0   ok             1.5s     0  done 0");
  CHECK(grid.line(6) == "");
  CHECK(grid.line(7).find("Ctrl-C: stop") == 0);
  CHECK(grid.line(7).find("rows 1-4 of 4") != std::string::npos);
  frame.run_over = true;
  draw_live_list(grid, rows, list, frame);
  CHECK(grid.line(7).find("q: quit") == 0);
  CHECK(grid.line(0).find("3.0s, ended") != std::string::npos);
}

TEST_CASE("live layout: 1,024 rows scroll by line, page, home and end, and the cursor stays shown") {
  LiveRows rows(live_layout_labels(1024), 1 << 16);
  LiveGrid grid(24, 60);  // 21 rows of workers
  LiveList list;
  const LiveFrame frame{kLiveT0, 0, false, ""};
  draw_live_list(grid, rows, list, frame);
  const std::size_t height = tpush::output::live_list_height(grid.rows());
  CHECK(height == 21);
  CHECK(grid.line(2).find("host0 ") == 0);
  CHECK(grid.line(22).find("host20 ") == 0);
  CHECK(grid.line(23).find("rows 1-21 of 1024") != std::string::npos);
  for (int i = 0; i < 25; ++i) live_list_key(list, LiveKey::down, 1024, height);
  CHECK(list.cursor == 25);
  CHECK(list.top == 5);
  live_list_key(list, LiveKey::page_down, 1024, height);
  CHECK(list.cursor == 46);
  live_list_key(list, LiveKey::end, 1024, height);
  draw_live_list(grid, rows, list, frame);
  CHECK(grid.line(22).find("host1023 ") == 0);
  CHECK(grid.line(23).find("rows 1004-1024 of 1024") != std::string::npos);
  live_list_key(list, LiveKey::page_up, 1024, height);
  CHECK(list.cursor == 1023 - 21);
  live_list_key(list, LiveKey::home, 1024, height);
  CHECK(list.cursor == 0);
  CHECK(list.top == 0);
  live_list_key(list, LiveKey::up, 1024, height);
  CHECK(list.cursor == 0);
}

TEST_CASE("live layout: a worker's output opens at its end, scrolls, and notes dropped bytes") {
  LiveRows rows(live_layout_labels(2), 64 * 1024);
  rows.started(1, kLiveT0);
  rows.connected(1);
  std::string lots;
  for (int i = 0; i < 20000; ++i) lots += "line " + std::to_string(i) + "\n";
  rows.data(1, Stream::out, lots);
  rows.data(1, Stream::err, "warning: x\tz");
  LiveGrid grid(12, 70);
  LivePager pager = tpush::output::open_live_pager(1);
  const LiveFrame frame{kLiveT0 + 2s, 2, false, ""};
  draw_live_pager(grid, rows, pager, frame);
  CHECK(grid.line(0).find("host1: running, 2s") == 0);
  CHECK(grid.line(9) == "line 19999");
  CHECK(grid.line(10) == "warning: x      z");
  CHECK(grid.line(11).find("q/Esc: back") == 0);
  CHECK(grid.line(11).find("lines ") != std::string::npos);
  const std::size_t height = tpush::output::live_pager_height(grid.rows());
  live_pager_key(pager, LiveKey::home, height, 70);
  draw_live_pager(grid, rows, pager, frame);
  CHECK(grid.line(1).find("[tpush: ") == 0);
  CHECK(grid.line(1).find(" earlier bytes dropped: the live view keeps") != std::string::npos);
  CHECK(grid.line(2).find("line ") == 0);
  CHECK(grid.line(2) != "line 0");
  for (int i = 0; i < 3; ++i) live_pager_key(pager, LiveKey::down, height, 70);
  CHECK_FALSE(pager.follow);
  draw_live_pager(grid, rows, pager, frame);
  const std::string on_top = grid.line(1);
  CHECK(on_top.find("line ") == 0);
  rows.data(1, Stream::out, "\nmore\n");  // not following: the lines stay where they are, older ones dropped
  draw_live_pager(grid, rows, pager, frame);
  CHECK(grid.line(1) == on_top);
  live_pager_key(pager, LiveKey::end, height, 70);
  CHECK(pager.follow);
  draw_live_pager(grid, rows, pager, frame);
  CHECK(grid.line(9) == "more");  // unfinished lines come last
  CHECK(grid.line(10) == "warning: x      z");
}

TEST_CASE("live layout: an empty output, a failure's reason, a long line scrolled sideways") {
  LiveRows rows(live_layout_labels(2), 1 << 16);
  rows.finished(0, live_layout_result(Outcome::unreachable, -1, "connect refused"), kLiveT0);
  LiveGrid grid(6, 30);
  LivePager pager = tpush::output::open_live_pager(0);
  const LiveFrame frame{kLiveT0, 0, true, ""};
  draw_live_pager(grid, rows, pager, frame);
  CHECK(grid.line(0).find("host0: unreachable, 1.5s (con") == 0);
  CHECK(grid.line(1) == "(no output)");
  rows.data(1, Stream::out, std::string(25, 'a') + std::string(25, 'b') + "\n");
  LivePager wide = tpush::output::open_live_pager(1);
  draw_live_pager(grid, rows, wide, frame);
  CHECK(grid.line(1) == std::string(25, 'a') + std::string(5, 'b'));
  live_pager_key(wide, LiveKey::right, tpush::output::live_pager_height(6), 30);
  draw_live_pager(grid, rows, wide, frame);
  CHECK(grid.line(1) == std::string(10, 'a') + std::string(20, 'b'));
}
