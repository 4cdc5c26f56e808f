#include "tpush/inventory/inventory.h"

#include "tpush/inventory/host_list.h"

namespace tpush::inventory {

std::vector<Worker> workers_from_host_lists(const std::vector<std::string>& exprs,
                                            const std::vector<std::string>& files,
                                            const std::vector<std::string>& excludes,
                                            const HostListOptions& options) {
  auto hosts = select_hosts(exprs, files, excludes, options);

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
