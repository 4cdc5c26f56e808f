// What a worker sends on an agent channel tpush serves (ssh/agent_server.h):
// every byte is untrusted (whoever controls the worker writes them). The input
// is cut at each 0xff byte into chunks fed one by one, as channel reads come.
// Invariants: the output is whole agent messages, each a FAILURE, SUCCESS,
// IDENTITIES_ANSWER or SIGN_RESPONSE; with one planned hop, at most one
// signature is ever given, however many channels ask; a hop's identity is the
// only key ever listed. The key is a throw-away one made for this target.
#include "fuzz_support.h"
#include "tpush/ssh/agent/protocol.h"
#include "tpush/ssh/agent/server.h"
#include "tpush/ssh/identity/signing_key.h"
#include "tpush/ssh/wire.h"

using namespace tpush::ssh;

namespace {

constexpr const char* kKey =
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACDftK3xF3R/2iY1cW01YdTRhkcQ6BC7IvouXmtz86ATbQAAAIjPWTRkz1k0\n"
    "ZAAAAAtzc2gtZWQyNTUxOQAAACDftK3xF3R/2iY1cW01YdTRhkcQ6BC7IvouXmtz86ATbQ\n"
    "AAAEBbf50m9FFlAUj+MNURArxDjo098WqD1Tvt4uS8Owd0Rt+0rfEXdH/aJjVxbTVh1NGG\n"
    "RxDoELsi+i5ea3PzoBNtAAAABGZ1enoB\n"
    "-----END OPENSSH PRIVATE KEY-----\n";

const SigningKey& key() {
  static const SigningKey k = *SigningKey::parse(kKey, "");
  return k;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes = tpush::fuzz::as_text(data, size);
  AgentPolicy policy(nullptr);
  // The hop's host key is the same throw-away key: a fuzzed bind can name it.
  policy.plan(PlannedHop{"w1", key().public_blob(), "me", LoginIdentity{key().public_blob(), &key(), {}, "fuzz"}});
  int signatures = 0;
  // Two channels: the second is what a worker opens after its first is refused.
  for (int channel = 0; channel < 2; ++channel) {
    AgentConversation c(policy);
    std::size_t start = 0;
    while (start <= bytes.size() && !c.broken()) {
      const std::size_t end = std::min(bytes.find('\xff', start), bytes.size());
      c.receive(bytes.substr(start, end - start));
      start = end + 1;
    }
    std::string out = c.output();
    bool bad = false;
    while (auto m = agent::take_message(out, bad)) {
      const auto type = static_cast<std::uint8_t>((*m)[0]);
      FUZZ_CHECK(type == agent::kFailure || type == agent::kSuccess || type == agent::kIdentitiesAnswer ||
                 type == agent::kSignResponse);
      if (type == agent::kSignResponse) ++signatures;
      if (type == agent::kIdentitiesAnswer) {
        wire::Reader r(std::string_view(*m).substr(1));
        const auto n = r.u32();
        FUZZ_CHECK(n && *n <= 1);
        if (*n == 1) FUZZ_CHECK(r.string() == std::string_view(key().public_blob()));
      }
    }
    FUZZ_CHECK(!bad && out.empty());
  }
  FUZZ_CHECK(signatures <= 1);
  return 0;
}
