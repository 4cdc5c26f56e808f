// The line multiplexer (LineSplitter, LineOutput) and the output Writer, on real
// file descriptors: memfds for what was written, pipes for congestion and EPIPE.
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

#include "tpush/output/line_output.h"
#include "tpush/output/line_splitter.h"
#include "tpush/output/writer.h"
#include "test_support.h"

namespace {

using tpush::output::LineOutput;
using tpush::output::LineOutputOptions;
using tpush::output::LineSplitter;
using tpush::test::lines_of;
using tpush::test::random_stream;
using tpush::output::Stream;
using tpush::output::Writer;
using tpush::test::MemFile;

// What LineOutput should print for one worker's stream with a prefix: every
// line, a final partial one included, as prefix + line + "\n".
std::string expected_prefixed(std::string_view input, const std::string& prefix) {
  std::string out;
  while (!input.empty()) {
    const auto nl = input.find('\n');
    const auto line = input.substr(0, nl);
    out += prefix;
    out += line;
    out += '\n';
    if (nl == std::string_view::npos) break;
    input.remove_prefix(nl + 1);
  }
  return out;
}

}  // namespace

TEST_CASE("line output: prefixed output equals the input split into lines (property)") {
  std::mt19937 rng(7);
  for (int round = 0; round < 30; ++round) {
    const std::string input = random_stream(rng, 3000 + round * 97);
    const bool byte_by_byte = round % 5 == 0;
    MemFile out, err;
    {
      Writer writer(out.fd(), err.fd());
      LineOutput lines(writer, {"w"}, {});
      std::uniform_int_distribution<std::size_t> size(1, 200);
      std::string_view rest = input;
      while (!rest.empty()) {
        const std::size_t n = byte_by_byte ? 1 : std::min(size(rng), rest.size());
        lines.data(0, Stream::out, rest.substr(0, n));
        rest.remove_prefix(n);
        if (n % 3 == 0) lines.flush();
      }
      lines.end(0);
      lines.flush();
      writer.drain_and_stop();
    }
    INFO("round " << round);
    CHECK(out.contents() == expected_prefixed(input, "w: "));
    CHECK(err.contents().empty());
  }
}

TEST_CASE("line output: on a terminal, prefixes are padded so the text columns align") {
  MemFile out, err;
  Writer writer(out.fd(), err.fd());
  LineOutputOptions opts;
  opts.align_out = true;  // stdout is a terminal, stderr is not
  LineOutput lines(writer, {"h1", "host-long", "x"}, opts);
  lines.data(0, Stream::out, "one\n");
  lines.data(1, Stream::out, "two\n");
  lines.data(2, Stream::out, "three\n");
  lines.data(2, Stream::err, "oops\n");
  lines.flush();
  writer.drain_and_stop();
  CHECK(out.contents() ==
        "h1:        one\n"
        "host-long: two\n"
        "x:         three\n");
  CHECK(err.contents() == "x: oops\n");  // a pipe gets pdsh's exact "LABEL: TEXT"
}

TEST_CASE("line output: remote stdout and stderr go to different fds") {
  MemFile out, err;
  Writer writer(out.fd(), err.fd());
  LineOutput lines(writer, {"a", "b"}, {});
  lines.data(0, Stream::out, "out-a1\nout-");
  lines.data(0, Stream::err, "err-a1\n");
  lines.data(1, Stream::err, "err-b");
  lines.data(0, Stream::out, "a2\n");
  lines.data(1, Stream::out, "out-b1\n");
  lines.data(1, Stream::err, "1\n");
  lines.end(0);
  lines.end(1);
  lines.flush();
  writer.drain_and_stop();
  CHECK(out.contents() == "a: out-a1\na: out-a2\nb: out-b1\n");
  CHECK(err.contents() == "a: err-a1\nb: err-b1\n");
}

TEST_CASE("line output: a final line without newline") {
  MemFile out, err;
  SUBCASE("prefixed: printed with a newline added") {
    {
      Writer writer(out.fd(), err.fd());
      LineOutput lines(writer, {"w0"}, {});
      lines.data(0, Stream::out, "first\nlast");
      lines.data(0, Stream::err, "err-last");
      lines.flush();
      lines.end(0);
      lines.flush();
      writer.drain_and_stop();
    }
    CHECK(out.contents() == "w0: first\nw0: last\n");
    CHECK(err.contents() == "w0: err-last\n");
  }
  SUBCASE("-N: printed raw, without a newline") {
    {
      Writer writer(out.fd(), err.fd());
      LineOutputOptions opts;
      opts.prefix = false;
      LineOutput lines(writer, {"w0", "w1"}, opts);
      lines.data(0, Stream::out, "first\nla");
      lines.data(0, Stream::out, "st");
      lines.data(1, Stream::err, "e\n\nx");
      lines.end(0);
      lines.end(1);
      lines.flush();
      writer.drain_and_stop();
    }
    CHECK(out.contents() == "first\nlast");
    CHECK(err.contents() == "e\n\nx");
  }
  SUBCASE("nothing after a trailing newline") {
    {
      Writer writer(out.fd(), err.fd());
      LineOutput lines(writer, {"w0"}, {});
      lines.data(0, Stream::out, "only\n");
      lines.end(0);
      lines.flush();
      writer.drain_and_stop();
    }
    CHECK(out.contents() == "w0: only\n");
    CHECK(err.contents().empty());
  }
}

TEST_CASE("line output: non-UTF-8 and NUL bytes pass through untouched") {
  const std::string bytes("\xff\xfe\0\x80 caf\xc3\xa9 \xc3\x28 \0\0end", 20);
  REQUIRE(bytes.size() == 20);
  MemFile out, err;
  SUBCASE("prefixed") {
    {
      Writer writer(out.fd(), err.fd());
      LineOutput lines(writer, {"w"}, {});
      lines.data(0, Stream::out, bytes + "\n" + bytes);
      lines.end(0);
      lines.flush();
      writer.drain_and_stop();
    }
    CHECK(out.contents() == "w: " + bytes + "\nw: " + bytes + "\n");
  }
  SUBCASE("raw") {
    {
      Writer writer(out.fd(), err.fd());
      LineOutputOptions opts;
      opts.prefix = false;
      LineOutput lines(writer, {"w"}, opts);
      for (char c : bytes) lines.data(0, Stream::err, std::string_view(&c, 1));
      lines.end(0);
      lines.flush();
      writer.drain_and_stop();
    }
    CHECK(err.contents() == bytes);
  }
}

TEST_CASE("line output: a line longer than max_line is split into max_line pieces") {
  constexpr std::size_t max = LineSplitter::max_line;
  const std::string mib(1u << 20, 'x');
  const std::size_t chunks = max / mib.size() + 1;  // one MiB past max_line
  const std::size_t total = chunks * mib.size();

  SUBCASE("splitter") {
    LineSplitter s;
    std::vector<std::size_t> sizes;
    std::vector<bool> newlines;
    auto emit = [&](std::string_view line, bool nl) {
      sizes.push_back(line.size());
      newlines.push_back(nl);
      if (line != "next") CHECK(line.find_first_not_of('x') == std::string_view::npos);
    };
    for (std::size_t i = 0; i < chunks; ++i) s.append(mib, emit);
    s.append("\nnext\n", emit);
    CHECK(sizes == std::vector<std::size_t>{max, total - max, 4});
    CHECK(newlines == std::vector<bool>{false, true, true});
  }
  SUBCASE("prefixed output: each piece gets its prefix and a newline") {
    MemFile out, err;
    {
      Writer writer(out.fd(), err.fd());
      LineOutput lines(writer, {"w"}, {});
      for (std::size_t i = 0; i < chunks; ++i) lines.data(0, Stream::out, mib);
      lines.data(0, Stream::out, "\n");
      lines.flush();
      writer.drain_and_stop();
    }
    const std::string got = out.contents();
    const std::string_view v = got;
    REQUIRE(got.size() == 3 + max + 1 + 3 + (total - max) + 1);
    CHECK(v.substr(0, 3) == "w: ");
    CHECK(v.substr(3 + max, 4) == "\nw: ");
    CHECK(v.back() == '\n');
    CHECK(v.substr(3, max).find_first_not_of('x') == std::string_view::npos);
    CHECK(v.substr(3 + max + 4, total - max).find_first_not_of('x') == std::string_view::npos);
  }
}

// The split should not depend on how the bytes arrived: a runaway line that
// comes with its newline in the same chunk (or completes a long partial line)
// is emitted whole today, larger than max_line.
TEST_CASE("line output: max_line split does not depend on chunking") {
  constexpr std::size_t max = LineSplitter::max_line;
  std::string sizes;  // emitted line sizes, e.g. "16777216,10"
  auto emit = [&](std::string_view line, bool) {
    sizes += (sizes.empty() ? "" : ",") + std::to_string(line.size());
  };
  const std::string max_10 = std::to_string(max) + ",10";
  SUBCASE("one chunk with the newline") {
    LineSplitter s;
    s.append(std::string(max + 10, 'x') + "\n", emit);
    CHECK(sizes == max_10);
  }
  SUBCASE("a line of exactly max_line bytes gets no extra empty line") {
    // The piece is emitted when the partial line reaches max_line; the newline
    // in the next chunk then emits an empty line, which prefixed output prints
    // as a spurious "label: " line.
    LineSplitter s;
    s.append(std::string(max, 'x'), emit);
    s.append("\n", emit);
    CHECK(sizes == std::to_string(max));
  }
  SUBCASE("partial line completed by a chunk with the newline") {
    LineSplitter s;
    s.append(std::string(max - 10, 'x'), emit);
    s.append(std::string(20, 'x') + "\n", emit);
    CHECK(sizes == max_10);
  }
}

TEST_CASE("line output: interleaved partial lines of two workers never tear") {
  std::mt19937 rng(1234);
  const std::string a = random_stream(rng, 50000);
  const std::string b = random_stream(rng, 50000) + "b-tail";
  MemFile out, err;
  {
    Writer writer(out.fd(), err.fd());
    LineOutput lines(writer, {"alpha", "b"}, {});
    std::string_view ra = a, rb = b;
    std::uniform_int_distribution<std::size_t> size(1, 64);
    std::uniform_int_distribution<int> coin(0, 1);
    int turn = 0;
    while (!ra.empty() || !rb.empty()) {
      const bool pick_a = rb.empty() || (!ra.empty() && coin(rng) == 0);
      std::string_view& r = pick_a ? ra : rb;
      const std::size_t n = std::min(size(rng), r.size());
      lines.data(pick_a ? 0 : 1, Stream::out, r.substr(0, n));
      r.remove_prefix(n);
      if (++turn % 7 == 0) lines.flush();
    }
    lines.end(0);
    lines.end(1);
    lines.flush();
    writer.drain_and_stop();
  }
  // Every output line belongs to exactly one worker, and each worker's lines
  // come out whole and in order.
  std::vector<std::string> got_a, got_b;
  for (const auto& line : lines_of(out.contents())) {
    if (line.rfind("alpha: ", 0) == 0) {
      got_a.push_back(line.substr(7));
    } else if (line.rfind("b: ", 0) == 0) {
      got_b.push_back(line.substr(3));
    } else {
      FAIL_CHECK("line with no prefix: " << line);
    }
  }
  CHECK(got_a == lines_of(a));
  CHECK(got_b == lines_of(b));
  CHECK(out.contents().back() == '\n');
}
