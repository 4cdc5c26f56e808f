// `tpush shell [LABEL]`: an interactive login shell on one worker, reached
// as a run reaches it (the resolution cache, jump hosts, the slice's IAP
// tunnel), on a pseudo-terminal the size of the local one.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "tpush/commands/cli/options.h"
#include "tpush/inventory/worker.h"

namespace tpush::commands {

int shell_main(Options& o, int signal_fd);

// The worker `label` names among `workers`: its label (w3, s1w0, a host as the
// list wrote it), else the only one whose host it is; the first without a
// label. UsageError when it names none, or several, its message starting with
// `asked` ("tpush shell w9", "tpush forward --on w9").
std::size_t pick_worker(const std::vector<inventory::Worker>& workers, const std::optional<std::string>& label,
                        const std::string& asked);

}  // namespace tpush::commands
