#include "tpush/commands/run_context.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <spdlog/spdlog.h>

#include "tpush/inventory/host_list.h"
#include "tpush/output/exit_codes.h"
#include "tpush/output/summary.h"
#include "tpush/util/error.h"
#include "tpush/util/environment.h"
#include "tpush/util/system.h"

namespace tpush::commands {
namespace {

bool use_color(const std::string& when) {
  if (when == "always") return true;
  if (when == "never") return false;
  return isatty(STDOUT_FILENO) && isatty(STDERR_FILENO) && !util::env_value("NO_COLOR");
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

std::vector<std::string> labels_of(const std::vector<inventory::Worker>& workers) {
  std::vector<std::string> labels;
  labels.reserve(workers.size());
  for (const auto& w : workers) labels.push_back(w.label);
  return labels;
}

std::vector<std::filesystem::path> paths(const std::vector<std::string>& files) {
  return {files.begin(), files.end()};
}

// -J a,bob@b:2222: the jump hosts, outermost first. A jump host's user is its
// own (user@), else $USER: -l names the workers' user only, as with ssh.
std::vector<ssh::JumpPool::Hop> jump_hops(const std::string& spec) {
  std::vector<ssh::JumpPool::Hop> hops;
  if (spec.empty() || spec == "none") return hops;
  for (const auto& h : inventory::expand_host_list(spec)) {
    ssh::JumpPool::Hop hop;
    hop.endpoint.host = h.host;
    hop.endpoint.port = h.port ? h.port : 22;
    hop.endpoint.user = h.user.empty() ? util::user_name() : h.user;
    hop.name = hop.endpoint.user + "@" + h.text + (h.port ? "" : ":22");
    hops.push_back(std::move(hop));
  }
  if (hops.empty()) throw UsageError("-J '" + spec + "': no jump host in it (write -J [user@]host[:port][,...])");
  return hops;
}

}  // namespace

RunContext::RunContext(const Options& o, std::vector<inventory::Worker> workers, int signal_fd)
    : options_(o),
      workers_(std::move(workers)),
      signal_fd_(signal_fd),
      started_(std::chrono::steady_clock::now()),
      home_(util::home_dir()),
      credentials_(ssh::Credentials::gather(paths(o.identities), home_)),
      host_keys_(ssh::parse_host_key_mode(o.host_key_check), home_ / ".ssh" / "known_hosts",
                 {home_ / ".ssh" / "google_compute_known_hosts"}),
      labels_(labels_of(workers_)),
      default_user_(o.user.empty() ? util::user_name() : o.user),
      default_port_(o.port ? o.port : 22),
      fanout_(choose_fanout(o, workers_.size())),
      writer_(STDOUT_FILENO, STDERR_FILENO),
      lines_(writer_, labels_, {!o.no_prefix, use_color(o.color)}),
      jumps_(settings_, std::chrono::seconds(o.connect_timeout)) {
  settings_.credentials = &credentials_;
  settings_.host_keys = &host_keys_;
  settings_.home = home_;
  settings_.alive_interval = std::chrono::seconds(o.alive_interval);
  deadlines_.connect = std::chrono::seconds(o.connect_timeout);
  if (o.timeout) deadlines_.command = std::chrono::seconds(*o.timeout);
  deadlines_.alive_interval = settings_.alive_interval;
  deadlines_.alive_count = settings_.alive_count;
  settings_.reaper = &reaper_;
  jump_chain_ = jump_hops(o.jump);
}

ssh::Endpoint RunContext::endpoint(std::size_t i) const {
  const auto& w = workers_[i];
  ssh::Endpoint e;
  e.host = w.target.host;
  e.port = w.target.port ? w.target.port : default_port_;
  e.user = w.target.user.empty() ? default_user_ : w.target.user;
  e.host_key_aliases = w.host_key_aliases;
  e.pinned_host_key = w.pinned_host_key;
  if (!jump_chain_.empty()) e.via = const_cast<ssh::JumpPool&>(jumps_).route(jump_chain_, e.host, e.port);
  return e;
}

std::vector<std::size_t> RunContext::everyone() const {
  std::vector<std::size_t> all(workers_.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  return all;
}

fanout::RunOutcome RunContext::run(const std::vector<std::size_t>& targets, const JobFactory& make_job,
                                   fanout::InputFeed* input) {
  fanout::Scheduler scheduler(
      targets.size(), fanout_, [&](std::size_t k) { return make_job(targets[k]); }, signal_fd_, &lines_,
      after_events_, input);
  scheduler.add(reaper_);
  jumps_.attach(&scheduler);
  auto outcome = scheduler.run();
  jumps_.attach(nullptr);
  scheduler.remove(reaper_);
  return outcome;
}

int RunContext::finish(const fanout::RunOutcome& run) {
  lines_.flush();
  writer_.drain_and_stop();
  if (run.output_closed || writer_.reader_gone()) return exit_code::output_closed;
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  const auto mode = options_.summary_always ? output::SummaryMode::always
                    : options_.quiet       ? output::SummaryMode::quiet
                                           : output::SummaryMode::automatic;
  std::fputs(output::format_summary(run.results, labels_, seconds, mode).c_str(), stderr);
  return output::exit_code_for(run.results, run.interrupted);
}

void RunContext::retry_moved(fanout::RunOutcome& outcome, const Refresh& refresh, const JobFactory& make_job) {
  if (!refresh || outcome.interrupted || outcome.output_closed) return;
  std::vector<std::size_t> retry;
  std::vector<inventory::Worker> fresh;
  for (std::size_t i = 0; i < outcome.results.size(); ++i) {
    const auto& r = outcome.results[i];
    if (r.reached || (r.outcome != fanout::Outcome::unreachable && r.outcome != fanout::Outcome::timed_out))
      continue;
    if (fresh.empty()) {
      spdlog::info("cached addresses failed to connect; describing the TPU again");
      fresh = refresh();
    }
    const auto& old = workers_[i];
    for (const auto& f : fresh) {
      if (f.label != old.label || f.target == old.target) continue;
      spdlog::warn("{}: address changed from {} to {}; retrying", f.label, old.target.host, f.target.host);
      workers_[i] = f;
      retry.push_back(i);
    }
  }
  if (retry.empty()) return;
  const fanout::RunOutcome again = run(retry, make_job);
  for (std::size_t k = 0; k < retry.size(); ++k) outcome.results[retry[k]] = again.results[k];
  outcome.interrupted = again.interrupted;
  outcome.output_closed = again.output_closed;
}

}  // namespace tpush::commands
