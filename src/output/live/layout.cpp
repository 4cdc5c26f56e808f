#include "tpush/output/live/layout.h"

#include <algorithm>

#include "tpush/output/live/text.h"

namespace tpush::output {
namespace {

constexpr std::size_t kLiveGap = 2;
constexpr std::size_t kLiveStateColumns = 11;  // "interrupted", "unreachable"
constexpr std::size_t kLiveTimeColumns = 6;    // "59.9s", "59m59s"
constexpr std::size_t kLiveExitColumns = 4;    // "255", "KILL"

// The list's columns on a screen `width` wide.
struct LiveColumns {
  std::size_t label, state, time, exit, last;
};

LiveColumns live_columns_for(const LiveRows& rows, std::size_t width) {
  LiveColumns c{};
  c.label = std::min(std::max<std::size_t>(rows.label_columns(), 6), std::max<std::size_t>(8, width / 3));  // 6: "WORKER"
  c.state = c.label + kLiveGap;
  c.time = c.state + kLiveStateColumns + kLiveGap;
  c.exit = c.time + kLiveTimeColumns + kLiveGap;
  c.last = c.exit + kLiveExitColumns + kLiveGap;
  return c;
}

// `text` at x, cut to what is left of the row.
void live_put(LiveCanvas& canvas, int y, std::size_t x, std::string_view text, LiveStyle style,
              std::size_t width = ~std::size_t{0}) {
  const auto columns = static_cast<std::size_t>(canvas.columns());
  if (x >= columns) return;
  const std::string_view fitted = live_fit(text, 0, std::min(width, columns - x));
  if (!fitted.empty()) canvas.put(y, static_cast<int>(x), fitted, style);
}

// `text` right-aligned in the `width` columns from x.
void live_put_right(LiveCanvas& canvas, int y, std::size_t x, std::size_t width, std::string_view text,
                    LiveStyle style) {
  const std::size_t n = live_columns(text);
  live_put(canvas, y, x + (n < width ? width - n : 0), text, style, width);
}

// A row with `left` at its start and `right` at its end. When both do not
// fit, the header keeps its left whole (right left out) and the footer its
// right (left cut short).
void live_bar(LiveCanvas& canvas, int y, std::string_view left, std::string_view right, LiveStyle style) {
  const auto columns = static_cast<std::size_t>(canvas.columns());
  if (style == LiveStyle::footer || style == LiveStyle::cursor) canvas.fill(y, style);
  const bool keep_right = style == LiveStyle::footer && live_columns(right) <= columns / 2;
  if (!keep_right && live_columns(left) + 1 + live_columns(right) > columns) right = {};
  const std::size_t right_columns = live_columns(right);
  const std::size_t room = columns - right_columns;
  live_put(canvas, y, 0, left, style, room > 1 ? room - 1 : 0);
  live_put(canvas, y, room, right, style);
}

LiveStyle live_state_style(const LiveRows& rows, std::size_t w) {
  if (rows.failed(w)) return LiveStyle::bad;
  if (rows.phase(w) == LivePhase::running) return LiveStyle::busy;
  if (rows.phase(w) == LivePhase::done) return LiveStyle::good;
  return LiveStyle::text;
}

void live_draw_row(LiveCanvas& canvas, const LiveRows& rows, std::size_t w, int y, const LiveColumns& c,
                   const LiveFrame& frame, bool selected) {
  if (selected) canvas.fill(y, LiveStyle::cursor);
  const LiveStyle plain = selected ? LiveStyle::cursor : LiveStyle::text;
  live_put(canvas, y, 0, live_safe_text(rows.label(w)), plain, c.label);
  live_put(canvas, y, c.state, rows.state_text(w), selected ? plain : live_state_style(rows, w), kLiveStateColumns);
  live_put_right(canvas, y, c.time, kLiveTimeColumns, rows.time_text(w, frame.now), plain);
  live_put_right(canvas, y, c.exit, kLiveExitColumns, rows.exit_text(w), plain);
  live_put(canvas, y, c.last, rows.last_text(w), plain);
}

std::string live_range_text(const char* what, std::size_t first, std::size_t shown, std::size_t count) {
  if (count == 0) return std::string("no ") + what;
  return std::string(what) + " " + std::to_string(first + 1) + "-" + std::to_string(first + shown) + " of " +
         std::to_string(count);
}

void live_keep_visible(LiveList& list, std::size_t count, std::size_t height) {
  if (count == 0) {
    list = {};
    return;
  }
  list.cursor = std::min(list.cursor, count - 1);
  if (list.cursor < list.top) list.top = list.cursor;
  if (list.cursor >= list.top + height) list.top = list.cursor + 1 - height;
  list.top = std::min(list.top, count > height ? count - height : 0);
}

bool live_too_small(LiveCanvas& canvas) {
  if (canvas.rows() >= 4 && canvas.columns() >= 20) return false;
  if (canvas.rows() >= 1) live_put(canvas, 0, 0, "tpush --live: the terminal is too small", LiveStyle::title);
  return true;
}

}  // namespace

std::size_t live_list_height(int rows) { return rows > 4 ? static_cast<std::size_t>(rows - 3) : 1; }
std::size_t live_pager_height(int rows) { return rows > 3 ? static_cast<std::size_t>(rows - 2) : 1; }

void live_list_key(LiveList& list, LiveKey key, std::size_t count, std::size_t height) {
  if (count == 0) return;
  const std::size_t last = count - 1;
  const std::size_t top_max = count > height ? count - height : 0;
  switch (key) {
    case LiveKey::up: list.cursor -= list.cursor > 0 ? 1 : 0; break;
    case LiveKey::down: list.cursor = std::min(list.cursor + 1, last); break;
    case LiveKey::page_up:
      list.top -= std::min(list.top, height);
      list.cursor -= std::min(list.cursor, height);
      break;
    case LiveKey::page_down:
      list.top = std::min(list.top + height, top_max);
      list.cursor = std::min(list.cursor + height, last);
      break;
    case LiveKey::home: list.cursor = 0; break;
    case LiveKey::end: list.cursor = last; break;
    default: break;
  }
  live_keep_visible(list, count, height);
}

LivePager open_live_pager(std::size_t w) {
  LivePager pager;
  pager.worker = w;
  return pager;
}

void live_pager_key(LivePager& pager, LiveKey key, std::size_t height, std::size_t width) {
  const std::size_t count = pager.count();
  const std::size_t top_max = count > height ? count - height : 0;
  if (pager.follow) pager.top = top_max;
  switch (key) {
    case LiveKey::up: pager.top -= pager.top > 0 ? 1 : 0; break;
    case LiveKey::down: pager.top = std::min(pager.top + 1, top_max); break;
    case LiveKey::page_up: pager.top -= std::min(pager.top, height); break;
    case LiveKey::page_down: pager.top = std::min(pager.top + height, top_max); break;
    case LiveKey::home: pager.top = 0; break;
    case LiveKey::end: pager.top = top_max; break;
    case LiveKey::left: pager.left -= std::min(pager.left, std::max<std::size_t>(width / 2, 1)); break;
    case LiveKey::right: pager.left += std::max<std::size_t>(width / 2, 1); break;
    default: break;
  }
  pager.follow = pager.top >= top_max;
}

void refresh_live_pager(const LiveRows& rows, LivePager& pager) {
  const LiveOutput& output = rows.output(pager.worker);
  if (pager.generation == output.generation()) return;
  // Where the first line shown is among all the worker printed, so it stays
  // on top when older lines are dropped (unless following the end).
  const std::uint64_t first_shown = pager.top + pager.dropped_lines - (pager.note.empty() ? 0 : 1);
  pager.generation = output.generation();
  pager.lines = output.lines();
  pager.dropped_lines = output.dropped_lines();
  pager.note.clear();
  if (output.dropped_bytes() > 0)
    pager.note = "[tpush: " + std::to_string(output.dropped_bytes()) +
                 " earlier bytes dropped: the live view keeps a worker's last " + std::to_string(output.bound() / 1024) +
                 " KiB]";
  const std::uint64_t base = pager.dropped_lines - (pager.note.empty() ? 0 : 1);
  pager.top = static_cast<std::size_t>(first_shown > base ? first_shown - base : 0);
}

void draw_live_list(LiveCanvas& canvas, LiveRows& rows, LiveList& list, const LiveFrame& frame) {
  canvas.clear();
  if (live_too_small(canvas)) return;
  const std::vector<std::size_t>& order = rows.order();
  const std::size_t height = live_list_height(canvas.rows());
  live_keep_visible(list, order.size(), height);
  const std::string workers = std::to_string(rows.size()) + (rows.size() == 1 ? " worker: " : " workers: ");
  live_bar(canvas, 0, "tpush --live: " + workers + rows.counts_text(),
           live_duration(frame.elapsed, false) + (frame.run_over ? ", ended" : ""), LiveStyle::title);
  const LiveColumns c = live_columns_for(rows, static_cast<std::size_t>(canvas.columns()));
  live_put(canvas, 1, 0, "WORKER", LiveStyle::heading, c.label);
  live_put(canvas, 1, c.state, "STATE", LiveStyle::heading);
  live_put_right(canvas, 1, c.time, kLiveTimeColumns, "TIME", LiveStyle::heading);
  live_put_right(canvas, 1, c.exit, kLiveExitColumns, "EXIT", LiveStyle::heading);
  live_put(canvas, 1, c.last, "LAST LINE", LiveStyle::heading);
  const std::size_t shown = std::min(height, order.size() - list.top);
  for (std::size_t k = 0; k < shown; ++k)
    live_draw_row(canvas, rows, order[list.top + k], static_cast<int>(2 + k), c, frame, list.top + k == list.cursor);
  const char* keys = frame.run_over ? "q: quit  Enter: output  Up/Dn PgUp/PgDn Home/End"
                                    : "Ctrl-C: stop  Enter: output  Up/Dn PgUp/PgDn Home/End";
  live_bar(canvas, canvas.rows() - 1, frame.message.empty() ? keys : frame.message,
           live_range_text("rows", list.top, shown, order.size()), LiveStyle::footer);
}

void draw_live_pager(LiveCanvas& canvas, const LiveRows& rows, LivePager& pager, const LiveFrame& frame) {
  canvas.clear();
  if (live_too_small(canvas)) return;
  refresh_live_pager(rows, pager);
  const std::size_t w = pager.worker;
  const std::size_t height = live_pager_height(canvas.rows());
  const std::size_t count = pager.count();
  const std::size_t top_max = count > height ? count - height : 0;
  pager.top = pager.follow ? top_max : std::min(pager.top, top_max);
  std::string title = live_safe_text(rows.label(w)) + ": " + rows.state_text(w);
  if (const std::string time = rows.time_text(w, frame.now); !time.empty()) title += ", " + time;
  if (rows.failed(w) && !rows.result(w).reason.empty()) title += " (" + live_safe_text(rows.result(w).reason) + ")";
  live_bar(canvas, 0, title, "stderr in bold", LiveStyle::title);
  const std::size_t shown = std::min(height, count - pager.top);
  for (std::size_t k = 0; k < shown; ++k) {
    const int y = static_cast<int>(1 + k);
    std::size_t i = pager.top + k;
    if (!pager.note.empty() && i-- == 0) {
      live_put(canvas, y, 0, pager.note, LiveStyle::note);
      continue;
    }
    std::string_view raw = pager.lines[i].text;
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);  // a pty's CRLF
    const std::string text = live_safe_text(raw);
    const LiveStyle style = pager.lines[i].stream == fanout::Stream::err ? LiveStyle::error_text : LiveStyle::text;
    live_put(canvas, y, 0, live_fit(text, pager.left, static_cast<std::size_t>(canvas.columns())), style);
  }
  if (count == 0)
    live_put(canvas, 1, 0, rows.phase(w) == LivePhase::done ? "(no output)" : "(no output yet)", LiveStyle::note);
  live_bar(canvas, canvas.rows() - 1,
           frame.message.empty() ? "q/Esc: back  Up/Dn PgUp/PgDn Home/End Left/Right"
                                 : frame.message,
           live_range_text("lines", pager.top, shown, count), LiveStyle::footer);
}

}  // namespace tpush::output
