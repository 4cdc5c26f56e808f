// Talking to the user's terminal directly (not stdin/stdout, which may be pipes).
#pragma once

#include <optional>
#include <string>

namespace tpush::util {

// Asks on /dev/tty with echo off; nullopt when there is no terminal.
std::optional<std::string> read_secret_from_tty(const std::string& prompt);

}  // namespace tpush::util
