// known_hosts files: KnownHosts::load, then lookups against what was loaded, and
// parse_public_key on every line's key part.
// Invariants: loading never stops early (every line is an entry or a warning
// "FILE:LINE: ..."), a key a line records checks as match (or revoked) for that
// line's plain host, and a parsed key's blob names its own type.
#include <sstream>

#include "fuzz_support.h"
#include "tpush/ssh/identity/known_hosts.h"
#include "tpush/ssh/wire.h"

using namespace tpush::ssh;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = tpush::fuzz::as_text(data, size);
  const auto file = tpush::fuzz::scratch_file("known_hosts", text);
  KnownHosts known;
  known.load(file);
  for (const std::string& w : known.warnings()) FUZZ_CHECK(w.starts_with(file.string() + ":"));

  std::istringstream lines{std::string(text)};
  std::string line;
  for (int n = 0; std::getline(lines, line) && n < 64; ++n) {
    // "host key..." where host is a plain name: the key must be found for it.
    const auto blank = line.find(' ');
    if (blank == std::string::npos) continue;
    const std::optional<HostKey> key = parse_public_key(std::string_view(line).substr(blank + 1));
    if (!key) continue;
    FUZZ_CHECK(wire::blob_type(key->blob) == key->type);
    FUZZ_CHECK(fingerprint_sha256(key->blob).starts_with("SHA256:"));
    const std::string host = line.substr(0, blank);
    if (host.empty() || host.find_first_of(",*?!|[]@#\t\r\\") != std::string::npos) continue;
    const HostKeyCheck check = known.check(host, 22, *key);
    FUZZ_CHECK(check.status == HostKeyStatus::match || check.status == HostKeyStatus::revoked);
    known.known_types(host, 2222);
  }
  return 0;
}
