// Talking to the user's terminal directly (not stdin/stdout, which may be pipes).
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>

#include <termios.h>

namespace tpush::util {

// How often a line tpush redraws in place (status, progress) may change.
inline constexpr std::chrono::milliseconds redraw_interval{200};

// Asks on the terminal with echo off; nullopt when there is none. `terminal`:
// a terminal lent for this run (a persist master has none of its own and asks
// on its client's, fanout::RunHost::terminal); -1: /dev/tty.
std::optional<std::string> read_secret_from_tty(const std::string& prompt, int terminal = -1);

// A new fd (close-on-exec) on the user's terminal (`terminal` lent, else
// /dev/tty), for reading keys and drawing; -1 when there is none.
int open_terminal(int terminal = -1);

// The width of the terminal on `fd`, or nullopt when `fd` is not a terminal
// (or says nothing useful).
std::optional<std::size_t> terminal_columns(int fd);

// The size of the terminal on `fd` as (columns, rows), or nullopt.
std::optional<std::pair<int, int>> terminal_size(int fd);

// The terminal on `fd` in raw mode while this lives (every key goes to the
// program as typed: no echo, no line editing, ^C and ^Z as bytes, not
// signals), and as it was again once it ends, whatever ended the scope.
// Nothing happens when `fd` is not a terminal.
class RawTerminal {
 public:
  explicit RawTerminal(int fd);
  ~RawTerminal();
  RawTerminal(const RawTerminal&) = delete;
  RawTerminal& operator=(const RawTerminal&) = delete;

 private:
  int fd_;
  bool saved_ = false;
  termios old_{};
};

}  // namespace tpush::util
