#include "tpush/commands/cli/subcommands.h"

#include "tpush/commands/copy/copy.h"
#include "tpush/commands/forward.h"
#include "tpush/commands/plan/persist_run.h"
#include "tpush/commands/process/process.h"
#include "tpush/commands/shell.h"

namespace tpush::commands {
namespace {

constexpr std::string_view kWorkers[] = {"workers [--json]"};
constexpr std::string_view kCp[] = {"cp [-r] [-p] SRC... DEST"};
constexpr std::string_view kGet[] = {"get [-r] [-p] REMOTE... LOCALDIR"};
constexpr std::string_view kRsync[] = {"rsync [RSYNC OPTIONS] SRC... DEST"};
constexpr std::string_view kKill[] = {"kill [-s SIG] [--grace SECONDS] [--sudo] PATTERN",
                                      "kill --tpu [-s SIG] [--grace SECONDS] [--sudo]"};
constexpr std::string_view kPs[] = {"ps [--all-users] [PATTERN]"};
constexpr std::string_view kLogs[] = {"logs [-f] [-n LINES] FILE"};
constexpr std::string_view kLast[] = {"last [--json]"};
constexpr std::string_view kShell[] = {"shell [LABEL]"};
constexpr std::string_view kForward[] = {"forward [--each | --on LABEL] SPEC..."};
constexpr std::string_view kConfig[] = {"config [--json]"};
constexpr std::string_view kDisconnect[] = {"disconnect"};

constexpr Subcommand kSubcommands[] = {
    {"workers", kWorkers, "the workers and where each came from", workers_main},
    {"cp", kCp, "copy files to every worker", cp_main},
    {"get", kGet, "gather files into LOCALDIR/<label>/", get_main},
    {"rsync", kRsync, "rsync to/from every worker (worker side :PATH)", rsync_main},
    {"kill", kKill, "stop matching processes, or what holds the TPU", kill_main},
    {"ps", kPs, "matching processes on every worker", ps_main},
    {"logs", kLogs, "the end of FILE on every worker (-f: follow)", logs_main},
    {"shell", kShell, "an interactive login shell on one worker (the first, or LABEL)", shell_main},
    {"forward", kForward, "forward local ports to a worker's side, as ssh -L does", forward_main},
    {"last", kLast, "the last run's summary (with worker options: the last on those workers)", last_main},
    {"config", kConfig, "the config file and groups read, each setting and where it came from", config_main},
    {"disconnect", kDisconnect, "end the persist master of these workers (see --persist)", disconnect_main},
};

}  // namespace

std::span<const Subcommand> subcommands() { return kSubcommands; }

const Subcommand* find_subcommand(std::string_view name) {
  for (const auto& s : kSubcommands)
    if (s.name == name) return &s;
  return nullptr;
}

}  // namespace tpush::commands
