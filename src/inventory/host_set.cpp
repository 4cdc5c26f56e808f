#include "tpush/inventory/host_set.h"

#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace tpush::inventory {
namespace {

using std::string_view;

// Matches hosts against entries: the same host name, and the entry's user and port
// where it names them. `entries` must outlive the matcher.
class Matcher {
 public:
  explicit Matcher(const std::vector<HostSpec>& entries) {
    by_host_.reserve(entries.size());
    for (const auto& e : entries) by_host_.emplace(e.host, &e);
  }
  bool matches(const HostSpec& host) const {
    const auto [first, last] = by_host_.equal_range(host.host);
    for (auto it = first; it != last; ++it) {
      const HostSpec& e = *it->second;
      if ((e.user.empty() || e.user == host.user) && (e.port == 0 || e.port == host.port)) return true;
    }
    return false;
  }

 private:
  std::unordered_multimap<string_view, const HostSpec*> by_host_;
};

}  // namespace

HostSet combine_hosts(char op, const HostSet& left, const HostSet& right) {
  const Matcher in_right(right.hosts());
  HostSet out;
  for (const auto& h : left.hosts()) {
    if (in_right.matches(h) == (op == '&')) out.add(h);
  }
  if (op == '^') {
    const Matcher in_left(left.hosts());
    for (const auto& h : right.hosts()) {
      if (!in_left.matches(h)) out.add(h);
    }
  }
  return out;
}

std::vector<HostSpec> exclude_hosts(std::vector<HostSpec> hosts, const std::vector<HostSpec>& excluded) {
  if (excluded.empty()) return hosts;
  const Matcher matcher(excluded);
  std::erase_if(hosts, [&](const HostSpec& host) { return matcher.matches(host); });
  return hosts;
}

std::vector<HostSpec> dedup_hosts(std::vector<HostSpec> hosts) {
  HostSet unique;
  unique.reserve(hosts.size());
  for (auto& h : hosts) unique.add(std::move(h));
  return std::move(unique).take();
}

}  // namespace tpush::inventory
