// Hosts files (-H): parse_hosts_text, one host list per line, comments, #include.
// Invariants: hosts are non-empty names without blanks or separators that do not
// start a comment, printable UTF-8 (no NUL, no control character, no stray byte),
// no host comes twice, and an error names the source and a line number.
#include <set>

#include "fuzz_support.h"
#include "tpush/inventory/host_list.h"
#include "tpush/util/error.h"
#include "tpush/util/string.h"

using namespace tpush::inventory;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = tpush::fuzz::as_text(data, size);
  tpush::fuzz::scratch_dir();
  if (tpush::fuzz::may_open_outside(text, {"^", "#include"})) return -1;
  try {
    std::set<std::tuple<std::string, std::string, uint16_t>> seen;
    for (const HostSpec& h : parse_hosts_text(text, "hosts.txt")) {
      FUZZ_CHECK(!h.host.empty() && h.host.find_first_of(" \t\r\n,") == std::string::npos && h.host[0] != '#');
      for (const std::string& part : {h.host, h.user})
        for (std::size_t i = 0; i < part.size(); i += tpush::util::utf8_length(part, i))
          FUZZ_CHECK(tpush::util::unprintable_length(part, i) == 0);
      FUZZ_CHECK(seen.insert({h.user, h.host, h.port}).second);
    }
  } catch (const tpush::UsageError& e) {
    FUZZ_CHECK(std::string_view(e.what()).find("hosts.txt") != std::string_view::npos);
  }
  return 0;
}
