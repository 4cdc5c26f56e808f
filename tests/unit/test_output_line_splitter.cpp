// Cutting a byte stream into whole lines (output/line_splitter).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "test_support.h"
#include "tpush/output/line_splitter.h"

namespace {

using tpush::output::LineSplitter;
using tpush::test::lines_of;
using tpush::test::random_stream;

}  // namespace

TEST_CASE("line output: splitter emits whole lines whatever the chunking") {
  std::mt19937 rng(42);
  const std::string input = random_stream(rng, 20000) + "tail without newline";
  std::vector<std::string> expected = lines_of(input);

  auto run = [&](auto&& chunker) {
    LineSplitter s;
    std::vector<std::string> got;
    std::vector<bool> newlines;
    auto emit = [&](std::string_view line, bool nl) {
      got.emplace_back(line);
      newlines.push_back(nl);
    };
    chunker(s, emit);
    s.finish(emit);
    CHECK(got == expected);
    REQUIRE(!newlines.empty());
    CHECK_FALSE(newlines.back());  // the tail had no newline
    for (std::size_t i = 0; i + 1 < newlines.size(); ++i) CHECK(newlines[i]);
    CHECK_FALSE(s.has_partial());
  };
  SUBCASE("byte by byte") {
    run([&](LineSplitter& s, auto& emit) {
      for (char c : input) s.append(std::string_view(&c, 1), emit);
    });
  }
  SUBCASE("random chunk sizes") {
    for (int round = 0; round < 20; ++round) {
      run([&](LineSplitter& s, auto& emit) {
        std::uniform_int_distribution<std::size_t> size(0, 300);
        std::string_view rest = input;
        while (!rest.empty()) {
          const std::size_t n = std::min(size(rng), rest.size());
          s.append(rest.substr(0, n), emit);
          rest.remove_prefix(n);
        }
      });
    }
  }
  SUBCASE("all at once") {
    run([&](LineSplitter& s, auto& emit) { s.append(input, emit); });
  }
}
