// The line a kept shell writes after each command's output, found in a stream
// cut into chunks anywhere.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <string_view>

#include "test_support.h"
#include "tpush/ssh/kept_shell_marker.h"

namespace {

using tpush::ssh::KeptShellMarker;

const std::string kTag = "tpush:end:0123456789abcdef:";

// Feeds `input` in chunks of `size` bytes; what passes before the marker.
std::string fed(std::string_view input, std::size_t size, KeptShellMarker& m) {
  return tpush::test::in_chunks(input, size, [&](std::string_view c) { return m.feed(c); });
}

}  // namespace

TEST_CASE("shell marker: output before the marker passes unchanged, whatever the chunking") {
  // The newline of a complete line is never held back for a marker that may follow.
  {
    KeptShellMarker m(kTag);
    CHECK(m.feed("started\n") == "started\n");
  }
  for (const std::string output : {"", "one line\n", "no newline at the end", "two\n\n", "\n"}) {
    for (std::size_t size : {1, 2, 5, 27, 4096}) {
      CAPTURE(output);
      CAPTURE(size);
      KeptShellMarker m(kTag);
      CHECK(fed(output + kTag + "17\n", size, m) == output);
      REQUIRE(m.word());
      CHECK(*m.word() == "17");
      CHECK(m.take_rest().empty());
    }
  }
}

TEST_CASE("shell marker: what follows the marker line is kept apart") {
  KeptShellMarker m(kTag);
  CHECK(fed("out\n" + kTag + "0+\nlate line\n", 3, m) == "out\n");
  REQUIRE(m.word());
  CHECK(*m.word() == "0+");
  CHECK(m.feed("later\n").empty());
  CHECK(m.take_rest() == "late line\nlater\n");
}

TEST_CASE("shell marker: near misses are output, and nothing is lost at the end") {
  std::mt19937 rng(11);
  const std::string noise = tpush::test::random_stream(rng, 3000);
  const std::string near = kTag.substr(0, 12) + "\n" + "tpush:end:0123456789abcdeF:1\n";
  const std::string long_word = kTag + std::string(40, '7') + "\n";
  for (std::size_t size : {1, 4, 64}) {
    CAPTURE(size);
    KeptShellMarker m(kTag);
    const std::string input = noise + near + long_word + "tail";
    const std::string out = fed(input, size, m);
    CHECK_FALSE(m.word());
    CHECK(out + m.flush() == input);
  }
  SUBCASE("a marker cut off by the end of the stream") {
    KeptShellMarker m(kTag);
    const std::string input = "x" + kTag + "1";
    const std::string out = fed(input, 2, m);
    CHECK(out + m.flush() == input);
  }
}
