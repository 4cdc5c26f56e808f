// Whole-file and whole-buffer I/O on descriptors and paths.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace tpush::util {

// Writes all of `data` to `fd`, retrying short writes and EINTR. False on any
// other error (errno tells which).
bool write_all(int fd, std::string_view data);

// The file's bytes; nullopt when it cannot be read (errno tells why).
std::optional<std::string> read_file(const std::filesystem::path& path);

// Replaces `path` with `data` atomically (a temporary file beside it, fsync,
// rename), mode 0600, creating its directory. Returns "" or why it failed.
std::string write_file_atomic(const std::filesystem::path& path, std::string_view data);

}  // namespace tpush::util
