// What the fuzz targets share: a private scratch directory, and a check that
// aborts (so libFuzzer records the input) when an invariant breaks.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <string_view>

namespace tpush::fuzz {

// An invariant of the parser under test; a broken one is a finding like a crash.
#define FUZZ_CHECK(cond)                                                          \
  do {                                                                            \
    if (!(cond)) {                                                                \
      std::fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                               \
    }                                                                             \
  } while (0)

inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// An empty directory of this process's own, made the working directory, so that
// relative file names in the input (^FILE, #include, Include) find nothing.
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tpush-fuzz.XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) std::abort();
    std::filesystem::current_path(tmpl);
    return std::filesystem::path(tmpl);
  }();
  return dir;
}

// Writes `text` to a file in the scratch directory and returns its path.
inline std::filesystem::path scratch_file(std::string_view name, std::string_view text) {
  const std::filesystem::path path = scratch_dir() / name;
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(text.data(), std::streamsize(text.size()));
  return path;
}

// True when `text` could name a file outside the scratch directory through one of
// `openers` (e.g. "^" and "#include" in a host list): any '/' with one of them.
// Such inputs are skipped, so no input reads /dev/stdin, a FIFO or a huge file.
inline bool may_open_outside(std::string_view text, std::initializer_list<std::string_view> openers) {
  if (text.find('/') == std::string_view::npos) return false;
  for (std::string_view o : openers)
    if (text.find(o) != std::string_view::npos) return true;
  return false;
}

}  // namespace tpush::fuzz
