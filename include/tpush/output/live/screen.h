// The terminal the live view draws on, through ncurses: a SCREEN made with
// newterm() on dups of the tty fd (never initscr(): stdout is not where it
// draws), keys read without blocking, the size followed with TIOCGWINSZ (no
// SIGWINCH handler: signals are util/signals.cpp's alone), and close() that
// puts the terminal back as it was. The only file that includes ncurses.
#pragma once

#include <string>
#include <string_view>

#include "tpush/output/live/layout.h"

struct screen;  // ncurses' SCREEN

namespace tpush::output {

class LiveScreen final : public LiveCanvas {
 public:
  // Takes over the terminal open on `tty` (which the caller keeps and closes).
  // Throws UsageError when ncurses does not know the terminal ($TERM).
  explicit LiveScreen(int tty);
  ~LiveScreen() override;
  LiveScreen(const LiveScreen&) = delete;
  LiveScreen& operator=(const LiveScreen&) = delete;

  // Leaves the full screen and restores the terminal's modes (idempotent).
  void close();
  bool is_open() const { return screen_ != nullptr; }

  // The fd keys come from (-1 once closed).
  int key_fd() const { return is_open() ? in_fd_ : -1; }
  // The next key typed, or LiveKey::none when none is waiting.
  LiveKey next_key();
  // True when the terminal hung up: no key will come.
  bool hung_up() const;
  // Follows a change of the terminal's size (true when it changed).
  bool follow_size();
  // The next update() draws every cell again (Ctrl-L, after tpush was stopped).
  void repaint_all();
  // Sends what changed since the last update() to the terminal.
  void update();

  // LiveCanvas
  int rows() const override;
  int columns() const override;
  void clear() override;
  void put(int y, int x, std::string_view text, LiveStyle style) override;
  void fill(int y, LiveStyle style) override;

 private:
  int attributes(LiveStyle style) const;

  int in_fd_ = -1;
  void* in_ = nullptr;   // FILE*
  void* out_ = nullptr;  // FILE*
  ::screen* screen_ = nullptr;
  bool colour_ = false;
  std::string old_locale_;  // LC_CTYPE before the view set the user's
};

}  // namespace tpush::output
