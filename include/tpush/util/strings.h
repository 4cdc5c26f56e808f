// Small string helpers, ASCII only (what config keywords and host names need).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tpush::util {

std::string ascii_lowercase(std::string_view s);

// Equal when compared without regard to ASCII case.
bool iequals(std::string_view a, std::string_view b);

// Levenshtein distance, for "did you mean" hints.
std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace tpush::util
