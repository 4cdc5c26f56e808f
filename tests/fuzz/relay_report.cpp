// What a worker's relay script prints (relay/relay_script.h): every line from a
// worker is untrusted (a login script may print anything, and a worker may be
// hostile). Invariants: parsing never fails; an unknown first word is `unknown`;
// a report's text is the end of its line; an index is -1 or a number the line
// spells; an order line tpush writes is one line of 11 words, whatever its
// fields hold.
#include <algorithm>

#include "fuzz_support.h"
#include "tpush/relay/relay_script.h"

using namespace tpush::relay;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view line = tpush::fuzz::as_text(data, size);
  const RelayReport r = parse_relay_report(line);
  using K = RelayReport::Kind;
  const std::string_view word = line.substr(0, line.find(' '));
  const bool known = word == "ready" || word == "stored" || word == "end" || word == "hop" || word == "failed" ||
                     word == "short" || word == "mismatch";
  if (!known) FUZZ_CHECK(r.kind == K::unknown);
  if (r.kind != K::unknown) FUZZ_CHECK(line.ends_with(r.text));
  FUZZ_CHECK(r.index >= -1);
  if (r.index >= 0) FUZZ_CHECK(line.find(std::to_string(r.index)) != std::string_view::npos);

  // The same bytes as an address or directory in an order: one line, whatever they hold.
  HopTarget t{std::string(line), 22, "u", "a", "ssh-ed25519 AAAA", std::string(line), "ssh-ed25519 " + std::string(line)};
  const std::string order = relay_go(2, t);
  FUZZ_CHECK(order.find('\n') == order.size() - 1);
  FUZZ_CHECK(std::count(order.begin(), order.end(), ' ') == 10);
  // ... and as a "ready" line's directory: only a plain one is ever put in a command.
  if (plain_directory(line))
    FUZZ_CHECK(line.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/-") ==
               std::string_view::npos && line.find("..") == std::string_view::npos && line.front() == '/');
  FUZZ_CHECK(order.find_first_of("\t\r*?$`'\"\\;&|<>(){}") == std::string::npos);
  return 0;
}
