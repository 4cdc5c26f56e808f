// What gcloud prints: `tpu-vm describe`, `queued-resources describe` and
// `get-guest-attributes` JSON (any of them: each parser is fed every input), and
// its error text on stderr. Malformed input must be a SetupError, nothing else.
// Invariants: a parsed node's workers have addresses, a queued resource's nodes
// have names, and every host key gives gcloud's two aliases.
#include "fuzz_support.h"
#include "tpush/inventory/gcloud.h"
#include "tpush/inventory/tpu_describe.h"
#include "tpush/inventory/tpu_host_keys.h"
#include "tpush/inventory/tpu_queued_resource.h"
#include "tpush/util/error.h"

using namespace tpush::inventory;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = tpush::fuzz::as_text(data, size);
  const TpuNodeRef ref{"proj", "us-central2-b", "tpu"};
  try {
    const TpuNode node = parse_tpu_node(text, ref);
    std::vector<std::string> warnings;
    try {
      check_tpu_node(node, warnings);
      FUZZ_CHECK(!node.workers.empty());
    } catch (const tpush::SetupError&) {
    }
    tpu_node_cacheable(node);
  } catch (const tpush::SetupError&) {
  }
  try {
    const QueuedResource qr = parse_queued_resource(text, ref);
    for (const TpuNodeRef& n : qr.nodes) FUZZ_CHECK(!n.name.empty());
    try {
      check_queued_resource(qr);
    } catch (const tpush::SetupError&) {
    }
  } catch (const tpush::SetupError&) {
  }
  try {
    for (const auto& [worker, key] : parse_ed25519_host_keys(text, "guest attributes")) {
      FUZZ_CHECK(tpu_host_key_aliases("123", worker, key).size() == 2);
    }
  } catch (const tpush::SetupError&) {
  }
  GcloudResult failed{.args = {"compute", "tpus"}, .exit_code = 1, .err = std::string(text)};
  classify_gcloud_failure(failed);
  const std::string summary = gcloud_error_summary(failed.err);
  FUZZ_CHECK(summary.find('\n') == std::string::npos);
  gcloud_failure_message(failed, {.kind = "TPU", .name = "tpu", .zones_tried = {"us-central2-b"}});
  return 0;
}
