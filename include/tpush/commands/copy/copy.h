// `tpush cp` (push files to every worker), `tpush get` (gather files from every
// worker into LOCALDIR/<label>/...) and `tpush rsync` (the local rsync once per
// worker, over ssh with tpush's user, port, keys and host-key policy).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tpush/commands/cli/options.h"
#include "tpush/commands/plan/targets.h"
#include "tpush/fanout/copy_job.h"
#include "tpush/ssh/sftp/upload.h"

namespace CLI {
class App;
}

namespace tpush::commands {

class RunContext;

int cp_main(Options& o, int signal_fd);
int get_main(Options& o, int signal_fd);
int rsync_main(Options& o, int signal_fd);

// ---- what cp and get share -------------------------------------------------------

// -r/--recursive and -p/--preserve.
void add_copy_flags(CLI::App& app, bool& recursive, bool& preserve);

// Resolves the workers, then runs one SFTP transfer per worker (made by
// `transfer_for(ctx, worker)`) with progress on a terminal (`total_bytes`: 0 when
// not known ahead), retries workers whose cached TPU address moved, and prints
// the summary. Returns tpush's exit code.
using TransferFor = std::function<fanout::CopyJob::TransferFactory(const RunContext& ctx, std::size_t worker)>;
int run_transfers(const Options& o, int signal_fd, std::uint64_t total_bytes, const TransferFor& transfer_for);
// The same, on workers already resolved.
int run_transfers(const Options& o, int signal_fd, Targets t, std::uint64_t total_bytes,
                  const TransferFor& transfer_for);

// The copy sent once (--relay): the first worker gets the bytes from tpush and
// each passes them on to the next (relay/); same summary and exit code.
// A worker that cannot run the relay's script gets its copy over SFTP from
// tpush, `window` bytes in flight.
int run_relayed_copy(const Options& o, int signal_fd, Targets t,
                     std::shared_ptr<const std::vector<ssh::UploadItem>> items, bool preserve, std::size_t window);

// Below this many bytes a relay costs more (a script, a key, a hop's login on
// every worker) than it saves.
inline constexpr std::uint64_t kRelayMinBytes = 4u << 20;
// Whether `cp` relays when neither --relay nor --no-relay is given: TPU
// workers, a slice of 3 or more among them (a slice's workers share a fast
// network; each slice gets a chain of its own), all at once, and at least
// kRelayMinBytes.
bool relay_by_default(const Options& o, const Targets& t, std::uint64_t total_bytes);
// Why --relay cannot be used for these workers ("" when it can).
std::string relay_refusal(const Options& o, const Targets& t);

// ---- path rules (pure; unit-tested) --------------------------------------------

// A remote path as SFTP understands it: "~" and "~/x" become "." and "x"
// (SFTP paths are relative to the login directory already).
std::string sftp_path(const std::string& remote);

// True when DEST names a directory to copy into: it ends with '/', or there
// are several sources. Otherwise DEST is the name of the copy itself.
bool copies_into(const std::string& dest, std::size_t source_count);

// The remote path a source lands at: DEST/<basename> when copying into,
// else DEST. (`source` is a local path; "dir/" and "." use their real name.)
std::string upload_root(const std::string& source, const std::string& dest, bool into);

// One local file or directory and where it goes on every worker.
struct PlannedCopy {
  std::filesystem::path local;
  std::string remote;
  bool directory = false;
};

// Expands the sources (trees with -r, parents first). Throws UsageError for a
// missing source, or a directory without -r.
std::vector<PlannedCopy> plan_upload(const std::vector<std::string>& sources, const std::string& dest,
                                     bool recursive);

// rsync: replaces a leading ':' in each argument with "<host>:" (the remote side).
// Returns how many arguments were rewritten.
std::size_t rewrite_remote_args(std::vector<std::string>& args, const std::string& host);

}  // namespace tpush::commands
