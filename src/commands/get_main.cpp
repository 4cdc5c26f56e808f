// tpush get [-r] [-p] REMOTE... LOCALDIR: every worker's files land in
// LOCALDIR/<label>/<name>.
#include <CLI/CLI.hpp>

#include "tpush/commands/copy.h"
#include "tpush/commands/run_context.h"
#include "tpush/commands/targets.h"
#include "tpush/fanout/copy_job.h"
#include "tpush/output/progress.h"
#include "tpush/ssh/sftp_download.h"
#include "tpush/util/error.h"

namespace tpush::commands {

int get_main(Options& o, int signal_fd) {
  bool recursive = false, preserve = false;
  SubcommandSpec spec;
  spec.usage = "get [-r] [-p] REMOTE... LOCALDIR";
  spec.description =
      "Copy files from every worker into LOCALDIR/<label>/, over SFTP. Each file is written to a\n"
      "temporary name and renamed when complete.";
  spec.add_own = [&](CLI::App& app) {
    app.add_flag("-r,--recursive", recursive, "Copy directories and everything in them");
    app.add_flag("-p,--preserve", preserve, "Keep each file's mode and modification time (the port is --port)");
  };
  auto args = parse_subcommand(o, spec);
  if (!args) return 0;
  if (args->size() < 2)
    throw UsageError("tpush get needs at least one remote path and a local directory (usage: tpush [OPTIONS] " +
                     spec.usage + ")");
  const std::filesystem::path local_dir = args->back();
  args->pop_back();
  std::error_code ec;
  std::filesystem::create_directories(local_dir, ec);
  if (ec || !std::filesystem::is_directory(local_dir))
    throw SetupError("cannot create the local directory " + local_dir.string() +
                     (ec ? ": " + ec.message() : ": not a directory"));

  const Targets t = resolve_targets(o, signal_fd);
  RunContext ctx(o, t.workers, signal_fd);
  std::vector<std::string> labels;
  for (const auto& w : ctx.workers()) labels.push_back(w.label);
  output::Progress progress(labels, 0, output::Progress::stderr_is_terminal());
  const std::vector<std::string> remotes = *args;

  const RunContext::JobFactory make_job = [&](std::size_t i) -> std::unique_ptr<fanout::Job> {
    std::vector<ssh::DownloadRequest> requests;
    for (const auto& r : remotes)
      requests.push_back({sftp_path(r), ssh::download_target(local_dir, labels[i], r)});
    return std::make_unique<fanout::CopyJob>(
        i, ctx.endpoint(i), ctx.settings(), ctx.deadlines(),
        [requests, recursive, preserve](LIBSSH2_SESSION* s) {
          return std::make_unique<ssh::SftpDownload>(s, requests, recursive, preserve);
        },
        &progress, ctx.writer());
  };
  auto run = ctx.run(ctx.everyone(), make_job);
  ctx.retry_moved(run, tpu_refresher(o, t, signal_fd), make_job);
  progress.clear(ctx.writer());
  return ctx.finish(run);
}

}  // namespace tpush::commands
