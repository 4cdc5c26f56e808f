#include "tpush/commands/run.h"

#include <unistd.h>

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <cstdio>

#include "tpush/fanout/command_job.h"
#include "tpush/fanout/scheduler.h"
#include "tpush/output/exit_codes.h"
#include "tpush/output/line_output.h"
#include "tpush/output/summary.h"
#include "tpush/output/writer.h"
#include "tpush/ssh/credentials.h"
#include "tpush/ssh/host_key_policy.h"
#include "tpush/util/error.h"
#include "tpush/util/shell_quote.h"
#include "tpush/util/system.h"

namespace tpush::commands {
namespace {

bool use_color(const std::string& when) {
  if (when == "always") return true;
  if (when == "never") return false;
  const char* no_color = std::getenv("NO_COLOR");
  return isatty(STDOUT_FILENO) && isatty(STDERR_FILENO) && !(no_color && *no_color);
}

std::size_t choose_fanout(const Options& o, std::size_t workers) {
  const std::size_t wanted = o.fanout ? o.fanout : std::min(workers, default_fanout_limit);
  const std::size_t needed = std::min(wanted, workers) + 64;  // sockets + our own files
  const std::size_t have = util::raise_open_file_limit(needed);
  if (have >= needed) return wanted;
  if (o.fanout)
    throw SetupError("--fanout " + std::to_string(o.fanout) + " needs " + std::to_string(needed) +
                     " open files but the limit is " + std::to_string(have) +
                     " (raise it with ulimit -n, or use --fanout " + std::to_string(have - 64) + ")");
  return have > 64 ? have - 64 : 1;
}

}  // namespace

std::string remote_command_line(const std::string& command, const inventory::Worker& worker,
                                std::size_t index, std::size_t count) {
  std::vector<std::pair<std::string, std::string>> env = {
      {"TPUSH_WORKER", std::to_string(index)}, {"TPUSH_NUM_WORKERS", std::to_string(count)}};
  for (const auto& [name, value] : worker.env) {
    bool replaced = false;
    for (auto& e : env)
      if (e.first == name) e.second = value, replaced = true;
    if (!replaced) env.emplace_back(name, value);
  }
  std::string line = "export";
  for (const auto& [name, value] : env) line += " " + name + "=" + util::shell_quote(value);
  return line + "; " + command;
}

int run_on_workers(const Options& o, const std::vector<inventory::Worker>& workers,
                   const RunPlan& plan) {
  const auto started = std::chrono::steady_clock::now();
  const auto home = util::home_dir();
  std::vector<std::filesystem::path> identities(o.identities.begin(), o.identities.end());
  const ssh::Credentials credentials = ssh::Credentials::gather(identities, home);
  ssh::HostKeyPolicy host_keys(ssh::parse_host_key_mode(o.host_key_check), home / ".ssh" / "known_hosts",
                               {home / ".ssh" / "google_compute_known_hosts"});

  ssh::ConnectionSettings settings;
  settings.credentials = &credentials;
  settings.host_keys = &host_keys;
  settings.home = home;
  settings.alive_interval = std::chrono::seconds(o.alive_interval);

  fanout::Deadlines deadlines;
  deadlines.connect = std::chrono::seconds(o.connect_timeout);
  if (o.timeout) deadlines.command = std::chrono::seconds(*o.timeout);
  deadlines.alive_interval = settings.alive_interval;
  deadlines.alive_count = settings.alive_count;

  std::vector<std::string> labels;
  for (const auto& w : workers) labels.push_back(w.label);
  const std::string default_user = o.user.empty() ? util::user_name() : o.user;
  const uint16_t default_port = o.port ? o.port : 22;
  const std::size_t fanout = choose_fanout(o, workers.size());

  output::Writer writer(STDOUT_FILENO, STDERR_FILENO);
  output::LineOutput lines(writer, labels, {!o.no_prefix, use_color(o.color)});

  // Runs the command on the workers at `targets` (indices into `workers`,
  // whose entries may have been refreshed since).
  std::vector<inventory::Worker> current = workers;
  auto run_subset = [&](const std::vector<std::size_t>& targets) {
    auto factory = [&](std::size_t k) -> std::unique_ptr<fanout::Job> {
      const std::size_t i = targets[k];
      const auto& w = current[i];
      ssh::Endpoint ep{w.target.host, w.target.port ? w.target.port : default_port,
                       w.target.user.empty() ? default_user : w.target.user, w.host_key_aliases,
                       w.pinned_host_key};
      return std::make_unique<fanout::CommandJob>(
          i, std::move(ep), settings, remote_command_line(plan.command, w, i, current.size()),
          deadlines, lines, writer);
    };
    fanout::Scheduler scheduler(targets.size(), fanout, factory, plan.signal_fd, &writer,
                                [&] { lines.flush(); });
    return scheduler.run();
  };

  std::vector<std::size_t> everyone(workers.size());
  for (std::size_t i = 0; i < everyone.size(); ++i) everyone[i] = i;
  fanout::RunOutcome run = run_subset(everyone);

  if (plan.refresh && !run.interrupted && !run.output_closed) {
    std::vector<std::size_t> retry;
    std::vector<inventory::Worker> fresh;
    for (std::size_t i = 0; i < workers.size(); ++i) {
      const auto& r = run.results[i];
      if (r.reached || (r.outcome != fanout::Outcome::unreachable && r.outcome != fanout::Outcome::timed_out))
        continue;
      if (fresh.empty()) {
        spdlog::info("cached addresses failed to connect; describing the TPU again");
        fresh = plan.refresh();
      }
      for (const auto& f : fresh) {
        if (f.label == current[i].label && !(f.target == current[i].target)) {
          spdlog::warn("{}: address changed from {} to {}; retrying", f.label, current[i].target.host,
                       f.target.host);
          current[i] = f;
          retry.push_back(i);
        }
      }
    }
    if (!retry.empty()) {
      fanout::RunOutcome again = run_subset(retry);
      for (std::size_t k = 0; k < retry.size(); ++k) run.results[retry[k]] = again.results[k];
      run.interrupted = again.interrupted;
      run.output_closed = again.output_closed;
    }
  }
  writer.drain_and_stop();
  if (run.output_closed || writer.reader_gone()) return exit_code::output_closed;

  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const auto mode = o.summary_always ? output::SummaryMode::always
                    : o.quiet       ? output::SummaryMode::quiet
                                    : output::SummaryMode::automatic;
  const std::string summary = output::format_summary(run.results, labels, seconds, mode);
  std::fputs(summary.c_str(), stderr);
  return output::exit_code_for(run.results, run.interrupted);
}

}  // namespace tpush::commands
