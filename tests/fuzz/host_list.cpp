// Host-list expressions (-w): expand_host_list, then the fold back into a node set.
// Invariants: every host is a non-empty printable UTF-8 name without blanks or separators, no host
// comes twice, and the hosts host-list syntax expresses fold into a node set that
// expands to exactly them again.
#include <algorithm>
#include <set>

#include "fuzz_support.h"
#include "tpush/inventory/host_groups.h"
#include "tpush/inventory/host_list.h"
#include "tpush/inventory/node_set.h"
#include "tpush/util/error.h"
#include "tpush/util/string.h"

using namespace tpush::inventory;

namespace {

const HostGroups& groups() {
  static const HostGroups g("all: node[01-32],login,w[0-3],127.0.1.[1-4]\n"
                            "rack1: node[01-16]\nio: @rack1,login\n",
                            "fuzz-groups");
  return g;
}

// Not empty, no blank or separator, printable UTF-8 (no NUL, control character or stray byte).
bool is_name(std::string_view s) {
  if (s.empty() || s.find_first_of(" \t\r\n\v\f,") != std::string_view::npos) return false;
  for (std::size_t i = 0; i < s.size(); i += tpush::util::utf8_length(s, i))
    if (tpush::util::unprintable_length(s, i) != 0) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view expr = tpush::fuzz::as_text(data, size);
  tpush::fuzz::scratch_dir();
  if (tpush::fuzz::may_open_outside(expr, {"^", "#include"})) return -1;
  std::vector<HostSpec> hosts;
  try {
    hosts = expand_host_list(expr, {.groups = &groups()});
  } catch (const tpush::UsageError&) {
    return 0;
  }
  std::set<std::tuple<std::string, std::string, uint16_t>> seen;
  std::vector<std::string> labels;
  // The parser may give up to a million hosts; checking the first ones keeps
  // each input fast.
  if (hosts.size() > 10'000) hosts.resize(10'000);
  for (const HostSpec& h : hosts) {
    FUZZ_CHECK(is_name(h.host) && is_name(h.text));
    FUZZ_CHECK(h.user.find_first_of(" \t\r\n,") == std::string::npos);
    FUZZ_CHECK(seen.insert({h.user, h.host, h.port}).second);
    if (h.user.empty() && host_list_expresses(h.text)) labels.push_back(h.text);
  }
  if (labels.size() > 256) labels.resize(256);
  const std::string folded = fold_node_set(labels);
  std::vector<std::string> back;
  for (const HostSpec& h : expand_host_list(folded)) back.push_back(h.text);
  std::sort(labels.begin(), labels.end());
  labels.erase(std::unique(labels.begin(), labels.end()), labels.end());
  std::sort(back.begin(), back.end());
  FUZZ_CHECK(back == labels);
  return 0;
}
