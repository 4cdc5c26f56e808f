// Where the live view puts things, apart from how they reach the terminal: the
// list (header with counts, one row per worker, footer with the keys) and one
// worker's output, drawn onto a LiveCanvas (live_screen's ncurses window, or a
// grid of text in unit tests); and what each key does to them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tpush/output/live/output.h"
#include "tpush/output/live/rows.h"

namespace tpush::output {

enum class LiveStyle { text, title, heading, cursor, bad, good, busy, error_text, footer, note };

class LiveCanvas {
 public:
  virtual ~LiveCanvas() = default;
  virtual int rows() const = 0;
  virtual int columns() const = 0;
  // Every row is blank when a frame starts.
  virtual void clear() = 0;
  // `text` (safe for the terminal, already cut to fit) at row y, column x.
  virtual void put(int y, int x, std::string_view text, LiveStyle style) = 0;
  // Row y blank in `style` (reverse video for the cursor row and the footer).
  virtual void fill(int y, LiveStyle style) = 0;
};

enum class LiveKey { none, up, down, page_up, page_down, home, end, left, right, open, back, quit, redraw, other };

// Where the list is: the first row shown and the selected row (positions in
// LiveRows::order(), so rows stay where they are on the screen).
struct LiveList {
  std::size_t top = 0;
  std::size_t cursor = 0;
};

// One worker's output, open over the list.
struct LivePager {
  std::size_t worker = 0;
  std::size_t top = 0;   // first line shown
  std::size_t left = 0;  // columns scrolled to the right
  bool follow = true;    // at the end, staying there as lines come
  // What is shown, as of the last refresh: a note on dropped output (when
  // some was), then the output's lines (views into it: refreshed before use).
  std::uint64_t generation = ~std::uint64_t{0};
  std::vector<LiveOutput::Line> lines;
  std::uint64_t dropped_lines = 0;  // lines dropped before lines.front()
  std::string note;
  std::size_t count() const { return lines.size() + (note.empty() ? 0 : 1); }
};

// What is the same on every screen: the time, the run's state, a message.
struct LiveFrame {
  LiveRows::Clock::time_point now{};
  double elapsed = 0;    // seconds since the run started (frozen once it ended)
  bool run_over = false;
  std::string message;   // shown in the footer instead of the keys
};

// Rows of the list and of the pager that a canvas of `rows` rows shows.
std::size_t live_list_height(int rows);
std::size_t live_pager_height(int rows);

void live_list_key(LiveList& list, LiveKey key, std::size_t count, std::size_t height);
void live_pager_key(LivePager& pager, LiveKey key, std::size_t height, std::size_t width);
// Opens worker w's output at its end.
LivePager open_live_pager(std::size_t w);

void draw_live_list(LiveCanvas& canvas, LiveRows& rows, LiveList& list, const LiveFrame& frame);
void draw_live_pager(LiveCanvas& canvas, const LiveRows& rows, LivePager& pager, const LiveFrame& frame);

// The pager's lines, brought up to date with the worker's output.
void refresh_live_pager(const LiveRows& rows, LivePager& pager);

}  // namespace tpush::output
