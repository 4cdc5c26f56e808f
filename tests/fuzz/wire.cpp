// The SSH wire decoding tpush does itself: wire::Reader over arbitrary bytes, the
// encoders read back, and the key blobs known_hosts checks (`type base64(blob)`).
// Invariants: a Reader never reads past its input and stays failed once failed;
// put_string and put_mpint read back as what was written.
#include "fuzz_support.h"
#include "tpush/ssh/identity/known_hosts.h"
#include "tpush/ssh/identity/user_certificate.h"
#include "tpush/ssh/wire.h"
#include "tpush/util/base64.h"

using namespace tpush::ssh;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes = tpush::fuzz::as_text(data, size);

  // Read as a sequence of strings, bytes and u32s chosen by the data itself.
  wire::Reader r(bytes);
  bool failed = false;
  for (std::size_t step = 0; step < 64; ++step) {
    const std::size_t before = r.rest().size();
    bool ok = false;
    switch (step % 3) {
      case 0: ok = r.string().has_value(); break;
      case 1: ok = r.byte().has_value(); break;
      case 2: ok = (step % 2 ? r.u64().has_value() : r.u32().has_value()); break;
    }
    FUZZ_CHECK(r.rest().size() <= before);
    FUZZ_CHECK(!(failed && ok));
    failed = failed || !ok;
  }

  // Encoders read back.
  std::string out;
  wire::put_string(out, bytes);
  wire::put_mpint(out, bytes);
  wire::Reader back(out);
  FUZZ_CHECK(back.string() == bytes);
  const auto mpint = back.string();
  FUZZ_CHECK(mpint && back.rest().empty());
  std::string_view magnitude = bytes;
  while (!magnitude.empty() && magnitude.front() == '\0') magnitude.remove_prefix(1);
  FUZZ_CHECK(mpint->ends_with(magnitude) && mpint->size() - magnitude.size() <= 1);
  FUZZ_CHECK(mpint->empty() || (static_cast<unsigned char>(mpint->front()) & 0x80) == 0);

  // The bytes as a key blob, the way a known_hosts line or a .pub file carries it.
  const std::string type = wire::blob_type(bytes);
  const std::string line = (type.empty() ? "ssh-ed25519" : type) + " " + tpush::util::base64_encode(bytes);
  if (const auto key = parse_public_key(line)) {
    FUZZ_CHECK(key->blob == bytes);
    FUZZ_CHECK(wire::blob_type(key->blob) == key->type);
  }

  // The bytes as a user certificate: read whole or not at all, its key a blob of its
  // own plain type, and what a server would refuse said for any user and time.
  if (const auto cert = UserCertificate::parse(bytes)) {
    FUZZ_CHECK(cert->blob == bytes);
    FUZZ_CHECK(plain_signature_algorithm(wire::blob_type(bytes)) == wire::blob_type(cert->key_blob));
    const std::string unfit = cert->unfit_for("someone", static_cast<std::time_t>(cert->valid_after));
    FUZZ_CHECK(cert->valid_after >= cert->valid_before || unfit.empty() || unfit.starts_with("its principals") ||
               cert->valid_after > static_cast<std::uint64_t>(INT64_MAX));
  }
  // The bytes as any certificate (a host's, offered in a key exchange): its signed
  // part inside it, and its authority's signature checked without a crash.
  if (const auto cert = tpush::ssh::Certificate::parse(bytes)) {
    FUZZ_CHECK(cert->signed_length < bytes.size());
    (void)cert->signed_by_authority();
  }
  return 0;
}
