// The process environment and the local user, read in one place.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace tpush::util {

// The value of environment variable `name`; nullopt when unset or empty.
std::optional<std::string> env_value(const char* name);

// $HOME, else the passwd entry's home directory.
std::filesystem::path home_dir();
// $USER, else the passwd entry's name.
std::string user_name();

// tpush's directory under an XDG base directory: $VAR/tpush when VAR holds an
// absolute path, else ~/FALLBACK/tpush ("XDG_CACHE_HOME", ".cache").
std::filesystem::path xdg_dir(const char* var, const char* fallback);

}  // namespace tpush::util
