// Hosts as a list without duplicates, and the set operations host lists use:
// ClusterShell's operators (`!`, `&`, `^`), pdsh's exclusions, duplicates
// dropped. A host is (user, host, port); where an exclusion or an operand names
// no user or port, any matches.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

#include "tpush/inventory/worker.h"

namespace tpush::inventory {

// Hosts in order, each (user, host, port) once. The index is an open-addressing
// table of positions in the list: no key strings, one probe per host (a range of
// 100,000 names goes through a few of these sets on its way to the workers).
class HostSet {
 public:
  // Adds `host` unless it is in already; says whether it was added.
  bool add(HostSpec host) {
    if ((hosts_.size() + 1) * 2 > slots_.size()) rehash(std::max<std::size_t>(16, slots_.size() * 2));
    const std::size_t slot = find_slot(host);
    if (slots_[slot] != kEmpty) return false;
    slots_[slot] = static_cast<uint32_t>(hosts_.size());
    hosts_.push_back(std::move(host));
    return true;
  }
  void add_all(const std::vector<HostSpec>& hosts) {
    reserve(hosts_.size() + hosts.size());
    for (const auto& h : hosts) add(h);
  }
  // `other`'s hosts after these; taken whole when this set is empty.
  void add_all(HostSet&& other) {
    if (hosts_.empty()) {
      *this = std::move(other);
      return;
    }
    reserve(hosts_.size() + other.hosts_.size());
    for (auto& h : other.hosts_) add(std::move(h));
  }
  // Room for `n` hosts, growing geometrically (sets grow by many add_all calls).
  void reserve(std::size_t n) {
    if (n > hosts_.capacity()) hosts_.reserve(std::max(n, hosts_.capacity() * 2));
    std::size_t want = 16;
    while (want < n * 2) want *= 2;
    if (want > slots_.size()) rehash(want);
  }
  const std::vector<HostSpec>& hosts() const { return hosts_; }
  std::vector<HostSpec> take() && { return std::move(hosts_); }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;  // max_expanded_hosts is far below

  static std::size_t hash(const HostSpec& h) {
    std::size_t seed = std::hash<std::string_view>{}(h.host);
    seed ^= std::hash<std::string_view>{}(h.user) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
    seed ^= h.port + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
    return seed;
  }
  // The slot holding a host equal to `host`, else the empty slot where it goes.
  std::size_t find_slot(const HostSpec& host) const {
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = hash(host) & mask;; i = (i + 1) & mask) {
      const uint32_t at = slots_[i];
      if (at == kEmpty) return i;
      const HostSpec& h = hosts_[at];
      if (h.port == host.port && h.host == host.host && h.user == host.user) return i;
    }
  }
  void rehash(std::size_t size) {  // size: a power of two
    slots_.assign(size, kEmpty);
    const std::size_t mask = size - 1;
    for (std::size_t k = 0; k < hosts_.size(); ++k) {
      std::size_t i = hash(hosts_[k]) & mask;
      while (slots_[i] != kEmpty) i = (i + 1) & mask;
      slots_[i] = static_cast<uint32_t>(k);
    }
  }

  std::vector<HostSpec> hosts_;
  std::vector<uint32_t> slots_;  // positions in hosts_, kEmpty where none
};

// ClusterShell's operators on `left` and `right`: '!' the hosts of left not in
// right, '&' those in both, '^' those in exactly one. The right side is a filter,
// as for exclusions.
HostSet combine_hosts(char op, const HostSet& left, const HostSet& right);

// Removes every host matched by an entry of `excluded`: the host names must be
// equal, and where the exclusion names a user or a port those must be equal too.
// Names are compared exactly (no DNS lookup, no case folding).
std::vector<HostSpec> exclude_hosts(std::vector<HostSpec> hosts,
                                    const std::vector<HostSpec>& excluded);

// Drops duplicates (same user, host and port), keeping the first occurrence.
std::vector<HostSpec> dedup_hosts(std::vector<HostSpec> hosts);

}  // namespace tpush::inventory
