#include "tpush/commands/plan/persist_run.h"

#include <cstdio>
#include <filesystem>
#include <iostream>

#include "tpush/commands/cli/subcommands.h"
#include "tpush/persist/client.h"
#include "tpush/util/error.h"

namespace tpush::commands {

std::string worker_set_of(const Options& o) {
  std::string set = "tpush persist 1\n";
  auto add = [&set](const char* name, const std::vector<std::string>& values) {
    for (const auto& v : values) set += std::string(name) + "=" + v + "\n";
  };
  add("t", o.tpus);
  add("q", o.queued_resources);
  add("w", o.host_exprs);
  add("x", o.excludes);
  std::vector<std::string> files;
  for (const auto& f : o.host_files) files.push_back(f == "-" ? f : std::filesystem::absolute(f).string());
  add("H", files);
  set += "zone=" + o.zone + "\nproject=" + o.project + "\n";
  if (o.internal_ip) set += "internal-ip\n";
  if (o.tunnel_through_iap) set += "iap\n";
  return set;
}

std::optional<int> hand_to_master(const Options& o, int signal_fd) {
  if (o.run_host) return std::nullopt;
  for (const auto& f : o.host_files)
    if (f == "-") return std::nullopt;  // the hosts come from our stdin, which the command may want too
  const auto persist = persist_time(o);
  if (persist.idle.count() == 0) return std::nullopt;
  persist::RunRequest request{worker_set_of(o), persist.idle, o.argv, {}};
  if (!persist.chosen)
    request.notice = "keeping these sessions open for " + std::to_string(persist.idle.count() / 60) +
                     " minutes for the next runs (tpush disconnect ends them; --persist 0 or TPUSH_PERSIST=0: never)";
  return persist::run_through_master(request, signal_fd);
}

int disconnect_main(Options& o, int /*signal_fd*/) {
  SubcommandSpec spec;
  spec.description =
      "end the persist masters of these workers (the same worker options as the runs that started them): their "
      "sessions are closed, and each is listed on stdout with how long it was idle.";
  spec.takes_args = false;
  if (!parse_subcommand(o, spec)) return 0;
  if (o.host_exprs.empty() && o.excludes.empty() && o.host_files.empty() && o.tpus.empty() &&
      o.queued_resources.empty())
    throw UsageError("disconnect needs the worker options of the runs (e.g. tpush disconnect -t mytpu)");
  const auto d = persist::disconnect(worker_set_of(o));
  if (!d.problem.empty()) throw SetupError("disconnect: " + d.problem);
  for (const auto& m : d.ended) {
    for (const auto& h : m.held) std::cout << h << "\n";
    std::cout.flush();
    std::fprintf(stderr, "tpush: ended the persist master (pid %ld); it held %zu session%s\n", m.pid, m.held.size(),
                 m.held.size() == 1 ? "" : "s");
  }
  if (d.busy.size() == 1)
    throw SetupError("disconnect: the persist master (pid " + std::to_string(d.busy[0]) +
                     ") is running a command; end that run (Ctrl-C) or wait for it, then disconnect again");
  if (!d.busy.empty()) {
    std::string pids;
    for (long pid : d.busy) pids += (pids.empty() ? "" : ", ") + std::to_string(pid);
    throw SetupError("disconnect: the persist masters (pids " + pids +
                     ") are running commands; end those runs (Ctrl-C) or wait for them, then disconnect again");
  }
  if (d.ended.empty()) std::fprintf(stderr, "tpush: no persist master for these workers (nothing to end)\n");
  return 0;
}

}  // namespace tpush::commands
