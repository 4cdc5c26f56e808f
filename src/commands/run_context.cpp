#include "tpush/commands/run_context.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <spdlog/spdlog.h>

#include <algorithm>

#include "tpush/output/exit_codes.h"
#include "tpush/ssh/proxy_command.h"
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

}  // namespace

// Every key any worker (or jump host) may use: -i files must exist; the
// others are read when they do.
std::vector<std::filesystem::path> identity_files_of(const std::vector<Reach>& reaches, bool explicit_ones) {
  std::vector<std::filesystem::path> out;
  std::function<void(const Reach&)> add = [&](const Reach& r) {
    for (const auto& f : r.identity_files)
      if ((f.from == "-i") == explicit_ones && std::find(out.begin(), out.end(), f.value) == out.end())
        out.push_back(f.value);
    for (const auto& hop : r.jump) add(hop.reach);
  };
  for (const auto& r : reaches) add(r);
  return out;
}

std::vector<Reach> plan_all(const ReachPlanner& planner, const std::vector<inventory::Worker>& workers) {
  std::vector<Reach> reaches;
  reaches.reserve(workers.size());
  for (const auto& w : workers) reaches.push_back(planner.plan(w));
  for (const auto& warning : planner.warnings()) spdlog::warn("{}", warning);
  return reaches;
}

RunContext::RunContext(const Options& o, std::vector<inventory::Worker> workers, int signal_fd)
    : options_(o),
      planner_(o, util::home_dir(), util::user_name()),
      workers_(std::move(workers)),
      reaches_(plan_all(planner_, workers_)),
      signal_fd_(signal_fd),
      started_(std::chrono::steady_clock::now()),
      home_(planner_.home()),
      credentials_(ssh::Credentials::gather(identity_files_of(reaches_, true), identity_files_of(reaches_, false))),
      labels_(labels_of(workers_)),
      fanout_(choose_fanout(o, workers_.size())),
      writer_(STDOUT_FILENO, STDERR_FILENO),
      lines_(writer_, labels_,
             {!o.no_prefix, use_color(o.color), isatty(STDOUT_FILENO) == 1, isatty(STDERR_FILENO) == 1}),
      jumps_(settings_) {
  settings_.credentials = &credentials_;
  settings_.home = home_;
  settings_.reaper = &reaper_;
}

fanout::Deadlines RunContext::deadlines(std::size_t i) const {
  const Reach& r = reaches_[i];
  fanout::Deadlines d;
  d.connect = std::chrono::seconds(r.connect_timeout.value);
  if (options_.timeout) d.command = std::chrono::seconds(*options_.timeout);
  d.alive_interval = std::chrono::seconds(r.alive_interval.value);
  d.alive_count = r.alive_count.value;
  return d;
}

ssh::Endpoint RunContext::endpoint(std::size_t i) {
  const auto& w = workers_[i];
  ssh::Endpoint e = endpoint_for(reaches_[i], w.label);
  // gcloud's names for a TPU worker's key come after an ssh_config HostKeyAlias.
  e.host_key_aliases.insert(e.host_key_aliases.end(), w.host_key_aliases.begin(), w.host_key_aliases.end());
  e.pinned_host_key = w.pinned_host_key;
  return e;
}

ssh::Endpoint RunContext::endpoint_for(const Reach& r, const std::string& label) {
  ssh::Endpoint e;
  e.host = r.hostname.value;
  e.port = r.port.value;
  e.user = r.user.value;
  if (!r.host_key_alias.value.empty()) e.host_key_aliases.push_back(r.host_key_alias.value);
  e.identities = identities_for(r);
  e.host_keys = host_keys_for(r);
  e.address_family = r.address_family.value;
  e.connection_attempts = r.connection_attempts.value;
  e.alive_interval = std::chrono::seconds(r.alive_interval.value);
  e.alive_count = r.alive_count.value;
  switch (r.via) {
    case Reach::Via::direct:
      break;
    case Reach::Via::jump:
      e.via = jumps_.route(hops_for(r), e.host, e.port);
      break;
    case Reach::Via::command: {
      const auto command = r.proxy_argv.empty() ? ssh::ProxyCommand::from_line(r.proxy_command.value)
                                                : ssh::ProxyCommand::from_argv(r.proxy_argv, r.proxy_command.value);
      spdlog::debug("{}: through proxy command {}", label, command.shown);
      e.via = [command, reaper = &reaper_] { return std::make_unique<ssh::ProxyCommandTransport>(command, reaper); };
      break;
    }
  }
  return e;
}

std::vector<ssh::JumpPool::Hop> RunContext::hops_for(const Reach& r) {
  std::vector<ssh::JumpPool::Hop> hops;
  for (const auto& hop : r.jump)
    hops.push_back({hop.name, endpoint_for(hop.reach, hop.name), std::chrono::seconds(hop.reach.connect_timeout.value)});
  return hops;
}

ssh::Identities RunContext::identities_for(const Reach& r) const {
  ssh::Identities ids;
  const std::string& agent = r.identity_agent.value;
  if (agent != "none" && (!agent.empty() || credentials_.use_agent)) ids.agent_socket = agent;
  for (const auto& f : r.identity_files)
    if (const ssh::KeyFile* k = credentials_.find(f.value))
      if (std::find(ids.keys.begin(), ids.keys.end(), k) == ids.keys.end()) ids.keys.push_back(k);
  ids.identities_only = r.identities_only.value;
  return ids;
}

ssh::HostKeyPolicy* RunContext::host_keys_for(const Reach& r) {
  std::string key = std::to_string(static_cast<int>(r.host_key_check.value));
  for (const auto& f : r.user_known_hosts.value) key += "|u:" + f.string();
  for (const auto& f : r.global_known_hosts.value) key += "|g:" + f.string();
  for (auto& [k, policy] : host_keys_)
    if (k == key) return policy.get();
  // The first user file is where new keys are recorded; the others are read.
  std::filesystem::path user_file;
  std::vector<std::filesystem::path> read_only;
  for (const auto& f : r.user_known_hosts.value) (user_file.empty() ? user_file : read_only.emplace_back()) = f;
  read_only.insert(read_only.end(), r.global_known_hosts.value.begin(), r.global_known_hosts.value.end());
  host_keys_.emplace_back(key, std::make_unique<ssh::HostKeyPolicy>(r.host_key_check.value, user_file, read_only));
  return host_keys_.back().second.get();
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
  // Workers that refused our key and know what would fix it (TPUs: let gcloud add it).
  std::vector<std::string> hints;
  for (std::size_t i = 0; i < run.results.size() && i < workers_.size(); ++i) {
    const auto& r = run.results[i];
    const std::string& hint = workers_[i].key_hint;
    if (r.outcome == fanout::Outcome::unreachable && r.reason.rfind("auth failed", 0) == 0 && !hint.empty() &&
        std::find(hints.begin(), hints.end(), hint) == hints.end())
      hints.push_back(hint);
  }
  for (const auto& h : hints) std::fprintf(stderr, "tpush: hint: %s\n", h.c_str());
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
      reaches_[i] = planner_.plan(f);
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
