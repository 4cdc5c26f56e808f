// Turns the command line's host sources into the ordered list of workers.
#pragma once

#include <string>
#include <vector>

#include "tpush/inventory/host_list.h"
#include "tpush/inventory/worker.h"

namespace tpush::inventory {

enum class LabelMode { host, index };

// -w expressions and -H files in the order given, minus -x exclusions,
// duplicates dropped (select_hosts). Labels are the host as written, or w<i>.
std::vector<Worker> workers_from_host_lists(const std::vector<std::string>& exprs,
                                            const std::vector<std::string>& files,
                                            const std::vector<std::string>& excludes,
                                            const HostListOptions& options = {});

// Applies the label mode (index: w0, w1, ...) to workers that came from host lists.
void apply_labels(std::vector<Worker>& workers, LabelMode mode);

}  // namespace tpush::inventory
