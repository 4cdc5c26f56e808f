// tpush get [-r] [-p] REMOTE... LOCALDIR: every worker's files land in
// LOCALDIR/<label>/<name>.
#include <CLI/CLI.hpp>

#include "tpush/commands/copy/copy.h"
#include "tpush/commands/plan/persist_run.h"
#include "tpush/commands/plan/run_context.h"
#include "tpush/ssh/sftp/download.h"
#include "tpush/util/error.h"

namespace tpush::commands {

int get_main(Options& o, int signal_fd) {
  bool recursive = false, preserve = false;
  SubcommandSpec spec;
  spec.without_sudo = "files are read as the login user, over SFTP"
                     " (copy them somewhere readable first with tpush --sudo 'cp ...', or print one with tpush --sudo 'cat FILE')";
  spec.description =
      "copy files from every worker into LOCALDIR/<label>/, over SFTP. Each file is written to a temporary "
      "name and renamed when complete.";
  spec.add_own = [&](CLI::App& app) { add_copy_flags(app, recursive, preserve); };
  auto args = parse_subcommand(o, spec);
  if (!args) return 0;
  if (auto code = hand_to_master(o, signal_fd)) return *code;
  if (args->size() < 2)
    throw UsageError("tpush get needs at least one remote path and a local directory (usage: " + usage_of("get") + ")");
  const std::filesystem::path local_dir = args->back();
  args->pop_back();
  std::error_code ec;
  std::filesystem::create_directories(local_dir, ec);
  if (ec || !std::filesystem::is_directory(local_dir))
    throw SetupError("cannot create the local directory " + local_dir.string() +
                     (ec ? ": " + ec.message() : ": not a directory"));

  const auto& remotes = *args;
  return run_transfers(o, signal_fd, 0, [&](const RunContext& ctx, std::size_t i) {
    std::vector<ssh::DownloadRequest> requests;
    for (const auto& r : remotes)
      requests.push_back({sftp_path(r), ssh::download_target(local_dir, ctx.workers()[i].label, r)});
    return [requests, recursive, preserve](ssh::Session& s) {
      return std::make_unique<ssh::SftpDownload>(s.session(), requests, recursive, preserve);
    };
  });
}

}  // namespace tpush::commands
