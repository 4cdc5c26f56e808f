// LiveView: the sink and Pollable that RunContext sees. The model is LiveRows,
// the layout live_layout, the terminal LiveScreen; this file paces the redraws
// and turns keys into moves, during the run and after it (hold_until_quit).
#include "tpush/output/live/view.h"


#include <cstdio>
#include <optional>

#include "tpush/output/live/layout.h"
#include "tpush/output/live/rows.h"
#include "tpush/output/live/screen.h"
#include "tpush/output/live/text.h"
#include "tpush/util/key_wait.h"

namespace tpush::output {
namespace {

using LiveClock = util::Pollable::Clock;
constexpr auto kLiveRedraw = std::chrono::milliseconds(100);  // at most ~10 frames a second
constexpr auto kLiveClockRedraw = std::chrono::seconds(1);    // the running times move on
constexpr auto kLiveStall = std::chrono::seconds(2);          // longer between ticks: tpush was stopped (^Z)
constexpr int kLiveHoldPollMs = 250;                          // after the run: how often the size is checked
constexpr std::size_t kLiveMaxNotices = 100;

}  // namespace

struct LiveView::Impl {
  Impl(std::vector<std::string> labels, int tty)
      : rows(labels, LiveRows::output_bound(labels.size())), screen(tty), began(LiveClock::now()) {}

  LiveFrame frame(LiveClock::time_point now) const {
    return {now, std::chrono::duration<double>(ended.value_or(now) - began).count(), ended.has_value(), message};
  }

  void draw(LiveClock::time_point now) {
    if (pager) draw_live_pager(screen, rows, *pager, frame(now));
    else draw_live_list(screen, rows, list, frame(now));
    screen.update();
    last_draw = now;
    dirty = false;
  }

  // A gap far longer than the loop's beat: tpush was stopped, and the shell
  // may have drawn over the screen and changed the terminal's modes.
  void after_gap(LiveClock::time_point now) {
    if (last_beat != LiveClock::time_point{} && now - last_beat > kLiveStall) {
      screen.repaint_all();
      dirty = true;
    }
    last_beat = now;
    if (screen.follow_size()) dirty = true;
  }

  // Returns true when the key quits the view (only once the run has ended).
  bool on_key(LiveKey key) {
    message.clear();
    dirty = true;
    if (key == LiveKey::redraw) {
      screen.repaint_all();
      return false;
    }
    if (pager) {
      if (key == LiveKey::back || key == LiveKey::quit) pager.reset();
      else live_pager_key(*pager, key, live_pager_height(screen.rows()), static_cast<std::size_t>(screen.columns()));
      return false;
    }
    const std::vector<std::size_t>& order = rows.order_shown();  // as drawn: what the cursor is on
    switch (key) {
      case LiveKey::open:
        if (list.cursor < order.size()) pager = open_live_pager(order[list.cursor]);
        return false;
      case LiveKey::quit:
        if (ended) return true;
        message = "still running: Ctrl-C stops the run, then q quits";
        return false;
      default:
        live_list_key(list, key, order.size(), live_list_height(screen.rows()));
        return false;
    }
  }

  // Every key waiting; true when one of them quits.
  bool read_keys(LiveClock::time_point now) {
    bool any = false;
    for (LiveKey key; (key = screen.next_key()) != LiveKey::none;) {
      any = true;
      if (on_key(key)) return true;
    }
    if (any) draw(now);  // keys are a person's pace: answer at once
    return false;
  }

  LiveRows rows;
  LiveScreen screen;
  LiveClock::time_point began;
  std::optional<LiveClock::time_point> ended;  // when the run ended: the clock stops
  LiveList list;
  std::optional<LivePager> pager;
  std::string message;               // in the footer until the next key
  std::vector<std::string> notices;  // tpush's own lines, for stderr once the screen is gone
  bool dirty = true;
  bool keys_gone = false;  // the terminal hung up
  LiveClock::time_point last_draw{};
  LiveClock::time_point last_beat{};
};

LiveView::LiveView(std::vector<std::string> labels, int tty) : impl_(std::make_unique<Impl>(std::move(labels), tty)) {
  impl_->draw(LiveClock::now());
}

LiveView::~LiveView() { close(); }

void LiveView::data(std::size_t worker, fanout::Stream stream, std::string_view bytes) {
  impl_->rows.data(worker, stream, bytes);
  impl_->dirty = true;
}

void LiveView::end(std::size_t worker) {
  impl_->rows.end(worker);
  impl_->dirty = true;
}

void LiveView::started(std::size_t worker) {
  impl_->rows.started(worker, LiveClock::now());
  impl_->dirty = true;
}

void LiveView::connected(std::size_t worker) {
  impl_->rows.connected(worker);
  impl_->dirty = true;
}

void LiveView::finished(std::size_t worker, const fanout::WorkerResult& result) {
  impl_->rows.finished(worker, result, LiveClock::now());
  impl_->dirty = true;
}

void LiveView::flush() {}  // frames are drawn on ticks, paced

void LiveView::notice(std::string line) {
  while (!line.empty() && line.back() == '\n') line.pop_back();
  impl_->message = live_safe_text(line);
  if (impl_->notices.size() < kLiveMaxNotices) impl_->notices.push_back(std::move(line));
  impl_->dirty = true;
}

int LiveView::fd() const { return impl_->keys_gone ? -1 : impl_->screen.key_fd(); }

util::Wait LiveView::wait() const { return fd() >= 0 ? util::Wait::read : util::Wait::none; }

void LiveView::advance(Clock::time_point now) {
  impl_->read_keys(now);  // q cannot quit while the run goes on
  if (impl_->screen.hung_up()) impl_->keys_gone = true;
}

void LiveView::tick(Clock::time_point now) {
  Impl& v = *impl_;
  if (!v.screen.is_open()) return;
  v.after_gap(now);
  if ((v.dirty && now - v.last_draw >= kLiveRedraw) || now - v.last_draw >= kLiveClockRedraw) v.draw(now);
}

void LiveView::hold_until_quit(int signal_fd) {
  Impl& v = *impl_;
  if (!v.screen.is_open()) return;
  auto now = LiveClock::now();
  v.ended = now;
  v.last_beat = now;
  v.message.clear();  // a notice of the run's (it goes to stderr after the view): the footer says how to quit
  v.draw(now);
  while (!v.keys_gone) {
    const util::KeyWait w = util::wait_key_or_signal(v.screen.key_fd(), signal_fd, kLiveHoldPollMs);
    now = LiveClock::now();
    // A signal is left for the caller to read.
    if (w == util::KeyWait::failed || w == util::KeyWait::signal || w == util::KeyWait::keys_gone) return;
    if (w == util::KeyWait::key && v.read_keys(now)) return;
    v.after_gap(now);
    if (v.dirty) v.draw(now);
  }
}

void LiveView::close() {
  if (!impl_ || !impl_->screen.is_open()) return;
  impl_->screen.close();
  for (const std::string& line : impl_->notices) std::fprintf(stderr, "%s\n", line.c_str());
  impl_->notices.clear();
}

}  // namespace tpush::output
