// SudoExchange: sudo's prompt and the root shell's mark are taken out of the
// stream they come on, however the bytes are cut; everything else passes on.
#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "tpush/fanout/sudo_exchange.h"

using tpush::fanout::SudoExchange;

namespace {

constexpr std::string_view kPrompt = "[p:1] ";
constexpr std::string_view kMark = "m:1";

struct Total {
  std::string out;
  int prompts = 0;
  bool ran = false;
};

// Feeds `bytes` in pieces of `step` bytes, then flushes.
Total feed(std::string_view bytes, std::size_t step) {
  SudoExchange x{std::string(kPrompt), std::string(kMark)};
  Total t;
  for (std::size_t at = 0; at < bytes.size(); at += step) {
    const auto seen = x.take(bytes.substr(at, step));
    t.out += seen.out;
    t.prompts += seen.prompts;
    t.ran = t.ran || seen.ran;
  }
  t.out += x.flush();
  return t;
}

}  // namespace

TEST_CASE("the prompt and the mark are taken out, cut anywhere, and the rest passes as it came") {
  const std::string stream =
      "lecture line\n\n" + std::string(kPrompt) + "Sorry, try again.\n" + std::string(kPrompt) + "\n" +
      std::string(kMark) + "\nroot output\n[p:1 is not a prompt\nm:1 neither\n";
  for (std::size_t step = 1; step <= stream.size(); ++step) {
    CAPTURE(step);
    const Total t = feed(stream, step);
    CHECK(t.prompts == 2);
    CHECK(t.ran);
    CHECK(t.out == "lecture line\n\nSorry, try again.\nroot output\n[p:1 is not a prompt\nm:1 neither\n");
  }
}

TEST_CASE("a pty's CRLF after the prompt and the mark is taken with them") {
  for (std::size_t step : {std::size_t{1}, std::size_t{3}, std::size_t{100}}) {
    CAPTURE(step);
    const Total t = feed(std::string(kPrompt) + "\r\n" + std::string(kMark) + "\r\nroot\r\n", step);
    CHECK(t.prompts == 1);
    CHECK(t.ran);
    CHECK(t.out == "root\r\n");
  }
}

TEST_CASE("after the mark the stream is the command's, prompts and all") {
  const Total t = feed(std::string(kMark) + "\n" + std::string(kPrompt) + std::string(kMark) + "\n", 5);
  CHECK(t.prompts == 0);
  CHECK(t.out == std::string(kPrompt) + std::string(kMark) + "\n");
}

TEST_CASE("without the mark (sudo refused), what sudo said passes, and a cut-off start of a prompt at the end") {
  const Total t = feed("sudo: a password is required\n[p:", 4);
  CHECK_FALSE(t.ran);
  CHECK(t.prompts == 0);
  CHECK(t.out == "sudo: a password is required\n[p:");
}
