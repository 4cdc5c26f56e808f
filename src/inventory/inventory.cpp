#include "tpush/inventory/inventory.h"

#include "tpush/inventory/host_list.h"

namespace tpush::inventory {

std::vector<Worker> workers_from_host_lists(const std::vector<std::string>& exprs,
                                            const std::vector<std::string>& files,
                                            const std::vector<std::string>& excludes) {
  std::vector<HostSpec> hosts;
  for (const auto& e : exprs) {
    auto more = expand_host_list(e);
    hosts.insert(hosts.end(), more.begin(), more.end());
  }
  for (const auto& f : files) {
    auto more = read_hosts_file(f);
    hosts.insert(hosts.end(), more.begin(), more.end());
  }
  std::vector<HostSpec> excluded;
  for (const auto& x : excludes) {
    auto more = expand_host_list(x);
    excluded.insert(excluded.end(), more.begin(), more.end());
  }
  hosts = dedup_hosts(exclude_hosts(std::move(hosts), excluded));

  std::vector<Worker> workers;
  workers.reserve(hosts.size());
  for (auto& h : hosts) {
    Worker w;
    w.label = h.text;
    w.target = std::move(h);
    workers.push_back(std::move(w));
  }
  return workers;
}

void apply_labels(std::vector<Worker>& workers, LabelMode mode) {
  if (mode != LabelMode::index) return;
  for (std::size_t i = 0; i < workers.size(); ++i) workers[i].label = "w" + std::to_string(i);
}

}  // namespace tpush::inventory
