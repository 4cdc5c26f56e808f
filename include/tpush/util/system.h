// Small facts about the local user and process.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

namespace tpush::util {

// $HOME, else the passwd entry's home directory.
std::filesystem::path home_dir();
// $USER, else the passwd entry's name.
std::string user_name();

// Raises the soft open-file limit to fit `wanted` descriptors (up to the hard
// limit); returns how many are available afterwards.
std::size_t raise_open_file_limit(std::size_t wanted);

}  // namespace tpush::util
