// Test support for the TPU tests: a private copy of the gcloud fixtures with
// the stand-in gcloud (tests/farm/gcloud) first on PATH, and a scratch cache.
// The environment is restored when the object goes away.
#pragma once

#include <doctest/doctest.h>

#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.h"
#include "tpush/inventory/tpu_describe.h"

namespace tpush::test {

// A TPU node of the stand-in gcloud's project and zone.
inline inventory::TpuNodeRef test_node(const std::string& name) {
  return {"tpush-test", "us-central2-b", name};
}

// The text of a stand-in gcloud fixture: tests/fixtures/gcloud/KIND/tpush-test/us-central2-b/NAME.json.
inline std::string fixture(const std::string& kind, const std::string& name) {
  auto path = source_root() / "tests/fixtures/gcloud" / kind / "tpush-test/us-central2-b" / (name + ".json");
  std::ifstream in(path);
  REQUIRE(in);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class FakeGcloud {
 public:
  // A gcloud deadline far above what the stand-in takes (about a second of CPU, as
  // gcloud's start-up does) even on a machine busy with the rest of the suite (over 30 s
  // there): for the tests that are not about timeouts, which set their own.
  static constexpr std::chrono::seconds patient{300};

  FakeGcloud() {
    namespace fs = std::filesystem;
    char tmpl[] = "/tmp/tpush-tpu-test-XXXXXX";
    dir_ = mkdtemp(tmpl);
    fixtures_ = dir_ / "gcloud";
    fs::copy(source_root() / "tests" / "fixtures" / "gcloud", fixtures_, fs::copy_options::recursive);
    fs::create_directories(dir_ / "gcloud-config");
    cache_ = dir_ / "cache";
    set("PATH", (source_root() / "tests" / "farm").string() + ":" + get("PATH").value_or("/usr/bin:/bin"));
    set("TPUSH_FAKE_GCLOUD_DIR", fixtures_.string());
    set("CLOUDSDK_CONFIG", (dir_ / "gcloud-config").string());  // no real gcloud config file
    for (const char* v : {"TPUSH_ZONE", "CLOUDSDK_COMPUTE_ZONE", "CLOUDSDK_CORE_PROJECT",
                          "CLOUDSDK_ACTIVE_CONFIG_NAME", "XDG_CACHE_HOME"}) {
      unset(v);
    }
  }
  ~FakeGcloud() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) ::setenv(it->first.c_str(), it->second->c_str(), 1);
      else ::unsetenv(it->first.c_str());
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  FakeGcloud(const FakeGcloud&) = delete;
  FakeGcloud& operator=(const FakeGcloud&) = delete;

  const std::filesystem::path& dir() const { return dir_; }
  const std::filesystem::path& fixtures() const { return fixtures_; }
  const std::filesystem::path& cache() const { return cache_; }

  void set(const std::string& name, const std::string& value) {
    remember(name);
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  void unset(const std::string& name) {
    remember(name);
    ::unsetenv(name.c_str());
  }

  // Writes a file under the fixture directory (creating folders).
  void write(const std::string& relative, const std::string& text) const {
    auto path = fixtures_ / relative;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }
  std::string read(const std::filesystem::path& path) const {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  void config(const std::string& property, const std::string& value) const {
    write("config/" + property, value + "\n");
  }
  void error(const std::string& command, const std::string& kind, const std::string& resource = "") const {
    write("error/" + command + (resource.empty() ? "" : "/" + resource), "{\"error\": \"" + kind + "\"}\n");
  }

  // The gcloud invocations so far, one line (a JSON array) each.
  std::vector<std::string> calls() const {
    std::vector<std::string> out;
    std::ifstream in(fixtures_ / "calls.log");
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }
  std::size_t count_calls(const std::string& needle) const {
    std::size_t n = 0;
    for (const auto& c : calls()) n += c.find(needle) != std::string::npos;
    return n;
  }

 private:
  static std::optional<std::string> get(const std::string& name) {
    const char* v = std::getenv(name.c_str());
    return v ? std::optional<std::string>(v) : std::nullopt;
  }
  void remember(const std::string& name) {
    for (const auto& s : saved_) {
      if (s.first == name) return;
    }
    saved_.emplace_back(name, get(name));
  }

  std::filesystem::path dir_, fixtures_, cache_;
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

}  // namespace tpush::test
