// ssh_config files: SshConfig::load of the input as a -F file, then resolve() for
// a few hosts. Match exec never runs anything (tpush warns and the block never
// applies); Include could read any file, so inputs with an Include and a '/' are
// skipped and relative Includes look in an empty directory.
// Invariants: every error and warning names where it comes from, a resolved port
// is never 0, and resolving twice gives the same answer.
#include <cctype>

#include "fuzz_support.h"
#include "tpush/ssh_config/config.h"

using namespace tpush::ssh_config;

namespace {

bool mentions_include(std::string_view text) {
  std::string lower(text);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower.find("include") != std::string::npos;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = tpush::fuzz::as_text(data, size);
  if (mentions_include(text) && text.find_first_of("/~") != std::string_view::npos) return -1;
  const auto dir = tpush::fuzz::scratch_dir();
  const auto file = tpush::fuzz::scratch_file("config", text);
  const SshConfigSources sources{.files = {{file, ConfigScope::named}},
                                 .home = dir,
                                 .local_user = "fuzz",
                                 .system_dir = dir};
  const SshConfig config = SshConfig::load(sources);
  for (const auto* list : {&config.errors(), &config.warnings()})
    for (const std::string& m : *list) FUZZ_CHECK(m.starts_with("~/config") || m.starts_with(file.string()));

  for (const char* host : {"w3", "example.com", "127.0.1.5", "node01"}) {
    const HostConfig a = config.resolve({.host = host});
    const HostConfig b = config.resolve({.host = host, .user = "root", .port = 2222});
    FUZZ_CHECK(!a.port.value || *a.port.value != 0);
    FUZZ_CHECK(b.port.value == uint16_t{2222} && b.user.value == std::string("root"));
    const HostConfig again = config.resolve({.host = host});
    FUZZ_CHECK(again.errors == a.errors && again.hostname.value == a.hostname.value &&
               again.identity_files.size() == a.identity_files.size());
    config.with_openssh_defaults(a);
  }
  return 0;
}
