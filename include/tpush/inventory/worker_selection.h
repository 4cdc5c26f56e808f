// gcloud's --worker syntax for TPU VMs: "all", "3", "1,4,6", "1-3", or a mix
// ("0,2-4"). Parsed once at startup (syntax errors are usage errors before
// any gcloud call) and applied to each TPU once its worker count is known.
#pragma once

#include <string>
#include <vector>

namespace tpush::inventory {

class WorkerSelection {
 public:
  // Throws UsageError naming the bad part, e.g. "--worker 3-1: ...".
  static WorkerSelection parse(const std::string& text);

  bool all() const { return all_; }
  const std::string& text() const { return text_; }

  // The selected worker indexes, ascending and unique, for a TPU with
  // `worker_count` workers. Throws UsageError naming the valid range when an
  // index is out of range (e.g. --worker 9 on an 8-worker TPU).
  std::vector<int> resolve(int worker_count, const std::string& tpu_name) const;

 private:
  bool all_ = true;
  std::string text_ = "all";
  std::vector<int> indexes_;  // ascending, unique (when !all_)
};

}  // namespace tpush::inventory
