// Small facts about this process.
#pragma once

#include <cstddef>

namespace tpush::util {

// Raises the soft open-file limit to fit `wanted` descriptors (up to the hard
// limit); returns how many are available afterwards.
std::size_t raise_open_file_limit(std::size_t wanted);

}  // namespace tpush::util
