#pragma once

#include <string>
#include <string_view>

namespace tpush::util {

// Quotes `value` for a POSIX shell so it reads back as exactly these bytes.
std::string shell_quote(std::string_view value);

}  // namespace tpush::util
