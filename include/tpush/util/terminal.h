// Talking to the user's terminal directly (not stdin/stdout, which may be pipes).
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

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

}  // namespace tpush::util
