// Small helpers the unit tests share: a scratch directory, an in-memory file,
// reading a file, running a shell command, the message an exception carries,
// and random byte streams cut into lines.
#pragma once

#include <doctest/doctest.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

namespace tpush::test {

// The repository's top directory (tests/unit/test_support.h, three levels up),
// absolute: fixtures found through it are named to processes the tests start (a
// PATH entry, a file nodeset's upcalls read from the directory of its config), so a
// relative __FILE__ must not make them relative to wherever the test runs.
inline std::filesystem::path source_root() {
  return std::filesystem::absolute(std::filesystem::path(__FILE__).parent_path().parent_path().parent_path());
}

// An anonymous in-memory file: the Writer writes to it, the test reads it back.
class MemFile {
 public:
  MemFile() : fd_(memfd_create("tpush-test", MFD_CLOEXEC)) { REQUIRE(fd_ >= 0); }
  ~MemFile() { close(fd_); }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;
  int fd() const { return fd_; }
  std::string contents() const {
    std::string out;
    char buf[1 << 16];
    off_t off = 0;
    for (;;) {
      const ssize_t n = pread(fd_, buf, sizeof buf, off);
      REQUIRE(n >= 0);
      if (n == 0) break;
      out.append(buf, static_cast<std::size_t>(n));
      off += n;
    }
    return out;
  }

 private:
  int fd_;
};

// A fresh directory under the system temp dir, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tpush-unit-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  // Writes `text` to NAME inside the directory; returns its path.
  std::filesystem::path write(const std::string& name, const std::string& text) const {
    const auto file = path_ / name;
    std::ofstream(file) << text;
    return file;
  }

 private:
  std::filesystem::path path_;
};

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct ShellRun {
  int status;  // the exit status, or -1 when killed by a signal
  std::string out;
};

// Runs `command` with /bin/sh (popen); returns its exit status and stdout.
inline ShellRun run_shell(const std::string& command) {
  FILE* f = ::popen(command.c_str(), "r");
  REQUIRE(f != nullptr);
  ShellRun r{-1, {}};
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) r.out.append(buf, n);
  const int status = ::pclose(f);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

// The message of the exception of type E that `run` throws; fails the test
// when it throws none.
template <class E = std::exception, class F>
std::string error_of(F run) {
  try {
    run();
  } catch (const E& e) {
    return e.what();
  }
  FAIL("expected an exception (" << typeid(E).name() << ")");
  return {};
}

inline bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Gives `input` to `take` in chunks of `size` bytes, as a stream arrives; what
// `take` returns for each, joined.
template <class Take>
std::string in_chunks(std::string_view input, std::size_t size, Take take) {
  std::string out;
  while (!input.empty()) {
    const std::size_t n = std::min(size, input.size());
    out += take(input.substr(0, n));
    input.remove_prefix(n);
  }
  return out;
}

// Random bytes (NUL and 0x80-0xff included) with newlines sprinkled in.
inline std::string random_stream(std::mt19937& rng, std::size_t size) {
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> nl(0, 15);
  std::string s;
  s.reserve(size);
  for (std::size_t i = 0; i < size; ++i) s += nl(rng) == 0 ? '\n' : static_cast<char>(byte(rng));
  return s;
}

// `text` cut at its newlines (a last line without one included).
inline std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    out.emplace_back(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return out;
}

inline bool have_ssh_keygen() { return std::system("command -v ssh-keygen >/dev/null 2>&1") == 0; }

}  // namespace tpush::test
