// The SSH wire encoding (RFC 4251 section 5) that tpush reads and writes itself:
// key blobs, OpenSSH private key files, signed userauth requests.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tpush::ssh::wire {

// Reads fields front to back from `bytes`; every read fails (nullopt) once the
// data runs short, and stays failed.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : rest_(bytes) {}

  std::optional<std::uint8_t> byte();
  std::optional<std::uint32_t> u32();
  std::optional<std::uint64_t> u64();
  std::optional<std::string_view> string();  // uint32 length, then the bytes
  std::string_view rest() const { return rest_; }

 private:
  std::string_view rest_;
  bool failed_ = false;
};

void put_u32(std::string& out, std::uint32_t value);
void put_string(std::string& out, std::string_view bytes);
// `magnitude` is an unsigned big-endian integer (leading zeros allowed); it is
// written as a positive mpint: leading zeros dropped, a zero byte added when
// the top bit is set.
void put_mpint(std::string& out, std::string_view magnitude);

// The type name a key blob starts with ("ssh-ed25519"), or "" when it does not
// start with one (too short, or a name that is empty or longer than 256 bytes).
std::string blob_type(std::string_view blob);

// The strings (uint32 length + bytes) the blob is made of, in order; nullopt
// unless it is exactly a sequence of them.
std::optional<std::vector<std::string_view>> strings_of(std::string_view blob);

}  // namespace tpush::ssh::wire
