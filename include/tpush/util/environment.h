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

}  // namespace tpush::util
