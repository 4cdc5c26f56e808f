// Standard base64 (RFC 4648, "+/" alphabet), as used by OpenSSH for keys,
// fingerprints and hashed known_hosts names. Bytes travel as std::string.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tpush::util {

// Encodes `bytes`; with pad=false the trailing '=' are left off (as in
// "SHA256:..." fingerprints).
std::string base64_encode(std::string_view bytes, bool pad = true);

// Decodes `text`. Padding is optional, but if present it must be correct;
// any character outside the alphabet (including whitespace) or an impossible
// length gives nullopt.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace tpush::util
