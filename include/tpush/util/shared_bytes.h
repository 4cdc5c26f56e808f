// A local file's bytes, read once and shared by everyone who sends them (every
// worker's upload reads the same memory).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace tpush::util {

class SharedBytes {
 public:
  // Maps `path` read-only; throws SetupError when it cannot be read.
  static std::shared_ptr<const SharedBytes> map_file(const std::string& path);
  // Small files are read into memory instead (mappings are a limited resource).
  static std::shared_ptr<const SharedBytes> from_string(std::string bytes);
  ~SharedBytes();
  SharedBytes(const SharedBytes&) = delete;
  SharedBytes& operator=(const SharedBytes&) = delete;

  const char* data() const { return data_; }
  std::uint64_t size() const { return size_; }

 private:
  SharedBytes() = default;
  const char* data_ = nullptr;
  std::uint64_t size_ = 0;
  bool mapped_ = false;
  std::string owned_;
};

}  // namespace tpush::util
