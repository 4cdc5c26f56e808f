#include "tpush/ssh/wire.h"

namespace tpush::ssh::wire {

std::optional<std::uint8_t> Reader::byte() {
  if (failed_ || rest_.empty()) {
    failed_ = true;
    return std::nullopt;
  }
  const auto b = static_cast<std::uint8_t>(rest_.front());
  rest_.remove_prefix(1);
  return b;
}

std::optional<std::uint32_t> Reader::u32() {
  if (failed_ || rest_.size() < 4) {
    failed_ = true;
    return std::nullopt;
  }
  const auto* p = reinterpret_cast<const unsigned char*>(rest_.data());
  const std::uint32_t v = (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) |
                          (std::uint32_t{p[2]} << 8) | std::uint32_t{p[3]};
  rest_.remove_prefix(4);
  return v;
}

std::optional<std::uint64_t> Reader::u64() {
  const auto high = u32();
  const auto low = u32();
  if (!high || !low) return std::nullopt;
  return (std::uint64_t{*high} << 32) | *low;
}

std::optional<std::string_view> Reader::string() {
  const auto len = u32();
  if (!len || *len > rest_.size()) {
    failed_ = true;
    return std::nullopt;
  }
  const std::string_view s = rest_.substr(0, *len);
  rest_.remove_prefix(*len);
  return s;
}

void put_u32(std::string& out, std::uint32_t value) {
  out.push_back(static_cast<char>(value >> 24));
  out.push_back(static_cast<char>(value >> 16));
  out.push_back(static_cast<char>(value >> 8));
  out.push_back(static_cast<char>(value));
}

void put_string(std::string& out, std::string_view bytes) {
  put_u32(out, static_cast<std::uint32_t>(bytes.size()));
  out.append(bytes);
}

void put_mpint(std::string& out, std::string_view magnitude) {
  while (!magnitude.empty() && magnitude.front() == '\0') magnitude.remove_prefix(1);
  const bool pad = !magnitude.empty() && (static_cast<unsigned char>(magnitude.front()) & 0x80);
  put_u32(out, static_cast<std::uint32_t>(magnitude.size() + (pad ? 1 : 0)));
  if (pad) out.push_back('\0');
  out.append(magnitude);
}

std::string blob_type(std::string_view blob) {
  constexpr std::size_t kLongestName = 256;
  Reader r(blob);
  const auto type = r.string();
  return type && !type->empty() && type->size() <= kLongestName ? std::string(*type) : std::string();
}

std::optional<std::vector<std::string_view>> strings_of(std::string_view blob) {
  std::vector<std::string_view> out;
  for (Reader r(blob); !r.rest().empty();) {
    const auto s = r.string();
    if (!s) return std::nullopt;
    out.push_back(*s);
  }
  return out;
}

}  // namespace tpush::ssh::wire
