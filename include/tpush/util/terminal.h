// Talking to the user's terminal directly (not stdin/stdout, which may be pipes).
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

namespace tpush::util {

// How often a line tpush redraws in place (status, progress) may change.
inline constexpr std::chrono::milliseconds redraw_interval{200};

// Asks on /dev/tty with echo off; nullopt when there is no terminal.
std::optional<std::string> read_secret_from_tty(const std::string& prompt);

// The terminal to ask on instead of /dev/tty (-1: /dev/tty again): a persist
// master, which has none, asks on its client's while it runs the client's command.
void prompt_on(int fd);

// A new fd (close-on-exec) on the user's terminal (the client's, in a persist
// master), for reading keys and drawing; -1 when there is none.
int open_terminal();

// The width of the terminal on `fd`, or nullopt when `fd` is not a terminal
// (or says nothing useful).
std::optional<std::size_t> terminal_columns(int fd);

}  // namespace tpush::util
