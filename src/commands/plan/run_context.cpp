#include "tpush/commands/plan/run_context.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>

#include "tpush/commands/plan/run_history.h"
#include "tpush/inventory/node_set.h"
#include "tpush/output/exit_codes.h"
#include "tpush/output/summary.h"
#include "tpush/ssh/kept_sessions.h"
#include "tpush/ssh/way/proxy_command.h"
#include "tpush/util/environment.h"
#include "tpush/util/error.h"
#include "tpush/util/system.h"
#include "tpush/util/terminal.h"

namespace tpush::commands {
namespace {

bool use_color(const std::string& when) {
  if (when == "always") return true;
  if (when == "never") return false;
  return isatty(STDOUT_FILENO) && isatty(STDERR_FILENO) && !util::env_value("NO_COLOR");
}

// Per stream (stdout, stderr): show workers' control characters escaped, on a
// terminal, unless --raw or -N (raw lines) asked for the bytes as they are.
std::array<bool, 2> escapes(const Options& o) {
  const bool on = !o.raw && !o.no_prefix;
  return {on && isatty(STDOUT_FILENO) == 1, on && isatty(STDERR_FILENO) == 1};
}

std::size_t choose_fanout(const Options& o, std::size_t workers) {
  const std::size_t wanted = o.fanout ? o.fanout : std::min(workers, default_fanout_limit);
  const std::size_t per_worker = o.out_dir.empty() ? 1 : 3;  // a socket (and --out-dir's two files)
  const std::size_t needed = std::min(wanted, workers) * per_worker + 64;  // and our own files
  const std::size_t have = util::raise_open_file_limit(needed);
  if (have >= needed) return wanted;
  const std::size_t fits = have > 64 ? (have - 64) / per_worker : 0;
  if (o.fanout)
    throw SetupError("--fanout " + std::to_string(o.fanout) + " needs " + std::to_string(needed) +
                     " open files but the limit is " + std::to_string(have) +
                     " (raise it with ulimit -n, or use --fanout " + std::to_string(std::max<std::size_t>(fits, 1)) +
                     ")");
  return std::max<std::size_t>(fits, 1);
}

bool is_failure(fanout::Outcome o) {
  using fanout::Outcome;
  return o == Outcome::failed || o == Outcome::unreachable || o == Outcome::timed_out || o == Outcome::lost;
}

ssh::ProxyCommand proxy_command_of(const Reach& r) {
  return r.proxy_argv.empty() ? ssh::ProxyCommand::from_line(r.proxy_command.value)
                              : ssh::ProxyCommand::from_argv(r.proxy_argv, r.proxy_command.value);
}

std::string proxy_route(const ssh::ProxyCommand& command) { return "proxy command " + command.shown; }

// The route of a worker reached through its slice's IAP tunnel; it also names
// the slice's lane in messages.
std::string iap_route(const std::string& slice) { return "IAP to TPU " + slice; }

// Who logs in where: the part of a worker's endpoint every route has.
ssh::Endpoint address_of(const Reach& r) {
  ssh::Endpoint e;
  e.host = r.hostname.value;
  e.port = r.port.value;
  e.user = r.user.value;
  return e;
}

// True when a persist master holds a live session for every worker of the run
// (each direct or through a proxy command; a jump route's key needs its hops'
// endpoints, so those count as not kept): no worker has to log in, and an
// encrypted key's passphrase is not asked, as ssh does not ask it for a
// ControlMaster's sessions.
// The terminal a persist master lends the run (its client's), or -1: /dev/tty.
int terminal_of(const Options& o) { return o.run_host ? o.run_host->terminal : -1; }

bool every_session_kept(const Options& o, const std::vector<Reach>& reaches) {
  if (!o.run_host || !o.run_host->pool || reaches.empty()) return false;
  for (const auto& r : reaches) {
    if (r.via == Reach::Via::jump) return false;
    ssh::Endpoint e = address_of(r);
    if (!r.iap_slice.empty()) e.route = iap_route(r.iap_slice);
    else if (r.via == Reach::Via::command) e.route = proxy_route(proxy_command_of(r));
    if (!o.run_host->pool->holds(ssh::KeptSessions::key_of(e))) return false;
  }
  return true;
}

std::vector<std::string> labels_of(const std::vector<inventory::Worker>& workers) {
  std::vector<std::string> labels;
  labels.reserve(workers.size());
  for (const auto& w : workers) labels.push_back(w.label);
  return labels;
}

}  // namespace

// Every path of the list `files` of any worker or jump host that `keep` takes,
// once each, in the order they come.
std::vector<std::filesystem::path> files_of(const std::vector<Reach>& reaches,
                                            std::vector<Sourced<std::filesystem::path>> Reach::*files,
                                            const std::function<bool(const Sourced<std::filesystem::path>&)>& keep) {
  std::vector<std::filesystem::path> out;
  std::function<void(const Reach&)> add = [&](const Reach& r) {
    for (const auto& f : r.*files)
      if (keep(f) && std::find(out.begin(), out.end(), f.value) == out.end()) out.push_back(f.value);
    for (const auto& hop : r.jump) add(hop.reach);
  };
  for (const auto& r : reaches) add(r);
  return out;
}

// Every key any worker (or jump host) may use: -i files must exist; the
// others are read when they do.
std::vector<std::filesystem::path> identity_files_of(const std::vector<Reach>& reaches, bool explicit_ones) {
  return files_of(reaches, &Reach::identity_files, [&](const auto& f) { return (f.from == "-i") == explicit_ones; });
}

// Every CertificateFile any worker (or jump host) names.
std::vector<std::filesystem::path> certificate_files_of(const std::vector<Reach>& reaches) {
  return files_of(reaches, &Reach::certificate_files, [](const auto&) { return true; });
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
      credentials_(ssh::Credentials::gather(identity_files_of(reaches_, true), identity_files_of(reaches_, false),
                                            certificate_files_of(reaches_), !every_session_kept(o, reaches_),
                                            terminal_of(o))),
      labels_(labels_of(workers_)),
      fanout_(choose_fanout(o, workers_.size())),
      writer_(STDOUT_FILENO, STDERR_FILENO),
      lines_(writer_, labels_,
             {!o.no_prefix, use_color(o.color), isatty(STDOUT_FILENO) == 1, isatty(STDERR_FILENO) == 1,
              escapes(o)[0], escapes(o)[1]}),
      status_(labels_, isatty(STDERR_FILENO) == 1 && !o.quiet && !o.live),
      running_(workers_.size(), 0),
      stopped_(workers_.size(), 0),
      own_jumps_(settings_),
      jumps_(o.run_host && o.run_host->pool ? o.run_host->pool->jumps() : own_jumps_) {
  settings_.credentials = &credentials_;
  settings_.home = home_;
  settings_.reaper = &reaper_;
  if (o.run_host) settings_.pool = o.run_host->pool;
  choose_output();
  if (&jumps_ != &own_jumps_) jumps_.lend(settings_);  // last: nothing may throw after it (the destructor parks)
}

RunContext::~RunContext() {
  if (live_) live_->close();
  if (tty_ >= 0) ::close(tty_);
  if (&jumps_ != &own_jumps_) jumps_.park();
}

std::vector<output::WorkerIdentity> RunContext::identities() const {
  std::vector<output::WorkerIdentity> out;
  out.reserve(workers_.size());
  for (std::size_t i = 0; i < workers_.size(); ++i) {
    const std::string& host = reaches_[i].hostname.value;
    const std::string address = (host.find(':') != std::string::npos ? "[" + host + "]" : host) + ":" +
                                std::to_string(reaches_[i].port.value);
    out.push_back({workers_[i].label, workers_[i].target.host, address});
  }
  return out;
}

// The sink the workers' output goes to, from -b, --leader, --json, --out-dir.
void RunContext::choose_output() {
  const Options& o = options_;
  if (o.json && (o.gather || o.leader))
    throw UsageError(std::string("--json does not go with ") + (o.gather ? "-b" : "--leader") +
                     ": every line is in the JSON already (group them with jq, or drop --json)");
  if (o.gather && o.leader)
    throw UsageError("-b and --leader do not go together: choose one (--leader streams one worker live, -b none)");
  if (o.json && o.diff)
    throw UsageError("--json does not go with --diff: every line is in the JSON already (compare with jq, or drop --json)");
  if (o.live && (o.json || o.gather || o.leader || o.diff))
    throw UsageError(std::string("--live does not go with ") +
                     (o.json ? "--json" : o.gather ? "-b" : o.leader ? "--leader" : "--diff") +
                     ": the live view is the whole screen (drop one of them)");
  if (o.live) {
    tty_ = util::open_terminal(terminal_of(o));
    if (tty_ < 0 || isatty(STDOUT_FILENO) != 1)
      throw UsageError("--live draws on a terminal, and " +
                       std::string(tty_ < 0 ? "tpush has none" : "stdout is not one") +
                       " (run it at a terminal, or drop --live: -b and --json suit pipes)");
    live_ = std::make_unique<output::LiveView>(labels_, tty_);
    sink_ = live_.get();
  } else if (o.json) {
    json_ = std::make_unique<output::JsonOutput>(writer_, identities());
    sink_ = json_.get();
  } else if (o.gather || o.leader || o.diff) {
    gather_ = std::make_unique<output::GatherOutput>(writer_, labels_, escapes(o));
    sink_ = gather_.get();
    if (o.leader) {
      std::size_t leader = 0;
      if (*o.leader != kFirstWorker) {
        const auto it = std::find(labels_.begin(), labels_.end(), *o.leader);
        if (it == labels_.end())
          throw UsageError("--leader=" + *o.leader + ": no such worker in this run (its workers: " +
                           inventory::fold_node_set(labels_) + ")");
        leader = static_cast<std::size_t>(it - labels_.begin());
      }
      leader_ = std::make_unique<output::LeaderOutput>(lines_, *gather_, leader);
      sink_ = leader_.get();
    }
  }
  if (!o.out_dir.empty()) {
    out_dir_ = std::make_unique<output::OutDir>(*sink_, o.out_dir, identities());
    sink_ = out_dir_.get();
  }
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

ssh::Endpoint RunContext::own_endpoint(std::size_t i) {
  const auto& w = workers_[i];
  ssh::Endpoint e = endpoint_for(reaches_[i], w.label);
  // gcloud's names for a TPU worker's key come after an ssh_config HostKeyAlias.
  e.host_key_aliases.insert(e.host_key_aliases.end(), w.host_key_aliases.begin(), w.host_key_aliases.end());
  e.pinned_host_key = w.pinned_host_key;
  return e;
}

// Through IAP, one tunnel to one worker of a slice carries the slice: that
// worker is a jump host to the others' internal addresses (each host key
// checked as its own), and a worker's own IAP tunnel is the way left when no
// worker of the slice can forward.
ssh::Endpoint RunContext::endpoint(std::size_t i) {
  ssh::Endpoint e = own_endpoint(i);
  const std::string& slice = reaches_[i].iap_slice;
  if (slice.empty()) return e;
  auto own_way = std::move(e.via);
  e.route = iap_route(slice);
  e.via = jumps_.route_through(e.route, slice_gateways(slice), e.host, e.port, std::move(own_way), "its own IAP tunnel");
  return e;
}

// The first two workers of the slice in this run: when neither can carry the
// others, trying more would cost a gcloud start each before every worker goes
// its own way anyway.
const std::vector<ssh::JumpPool::Hop>& RunContext::slice_gateways(const std::string& slice) {
  constexpr std::size_t kGatewaysPerSlice = 2;
  auto [it, made] = slice_gateways_.try_emplace(slice);
  if (!made) return it->second;
  for (std::size_t j = 0; j < workers_.size() && it->second.size() < kGatewaysPerSlice; ++j) {
    if (reaches_[j].iap_slice != slice) continue;
    const std::string name = workers_[j].label + " (" + workers_[j].iap->instance + ")";
    it->second.push_back({name, own_endpoint(j), std::chrono::seconds(reaches_[j].connect_timeout.value)});
  }
  return it->second;
}

ssh::Endpoint RunContext::endpoint_for(const Reach& r, const std::string& label) {
  ssh::Endpoint e = address_of(r);
  if (!r.host_key_alias.value.empty()) e.host_key_aliases.push_back(r.host_key_alias.value);
  e.identities = identities_for(r);
  e.host_keys = host_keys_for(r);
  e.address_family = r.address_family.value;
  e.connection_attempts = r.connection_attempts.value;
  e.alive_interval = std::chrono::seconds(r.alive_interval.value);
  e.alive_count = r.alive_count.value;
  if (r.forward_agent.value != "no") e.forward_agent = r.forward_agent.value == "yes" ? "" : r.forward_agent.value;
  switch (r.via) {
    case Reach::Via::direct:
      break;
    case Reach::Via::jump: {
      auto hops = hops_for(r);
      e.route = "jump host " + ssh::JumpPool::name_of(hops, hops.size());
      e.via = jumps_.route(std::move(hops), e.host, e.port);
      break;
    }
    case Reach::Via::command: {
      const auto command = proxy_command_of(r);
      spdlog::debug("{}: through proxy command {}", label, command.shown);
      e.via = [command, reaper = &reaper_] { return std::make_unique<ssh::ProxyCommandTransport>(command, reaper); };
      e.route = proxy_route(command);
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

std::vector<std::string> RunContext::logins() const {
  std::vector<std::string> who;
  who.reserve(workers_.size());
  for (std::size_t i = 0; i < workers_.size(); ++i) who.push_back(reaches_[i].user.value + "@" + labels_[i]);
  return who;
}

bool RunContext::can_ask() const {
  if (live_) return false;  // the live view holds the terminal
  const int fd = util::open_terminal(terminal_of(options_));
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

std::optional<std::string> RunContext::ask_secret(const std::string& prompt) {
  sink_->flush();
  status_.clear(writer_);
  writer_.drain();  // the workers' lines so far, then the prompt
  return util::read_secret_from_tty(prompt, terminal_of(options_));
}

ssh::Identities RunContext::identities_for(const Reach& r) const {
  ssh::Identities ids;
  const std::string& agent = r.identity_agent.value;
  if (agent != "none" && (!agent.empty() || credentials_.use_agent)) ids.agent_socket = agent;
  for (const auto& f : r.identity_files)
    if (const ssh::KeyFile* k = credentials_.find(f.value))
      if (std::find(ids.keys.begin(), ids.keys.end(), k) == ids.keys.end()) ids.keys.push_back(k);
  ids.identities_only = r.identities_only.value;
  // CertificateFile's, else those beside the keys (ssh's rule); each only
  // with its key among this worker's, and that key usable.
  const auto usable = [&](const ssh::UserCertificate* c) {
    return c && c->key && !c->key->unasked && std::find(ids.keys.begin(), ids.keys.end(), c->key) != ids.keys.end();
  };
  for (const auto& f : r.certificate_files)
    if (const ssh::UserCertificate* c = credentials_.find_certificate(f.value); usable(c)) ids.certificates.push_back(c);
  if (r.certificate_files.empty())
    for (const ssh::KeyFile* k : ids.keys)
      if (usable(k->certificate)) ids.certificates.push_back(k->certificate);
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
  status_.begin_run(targets.size(), std::chrono::steady_clock::now());
  fanout::Scheduler scheduler(
      targets.size(), fanout_, [&](std::size_t k) { return make_job(targets[k]); }, signal_fd_, sink_,
      [this] {
        if (after_events_) after_events_();
        else status_.poll(writer_, std::chrono::steady_clock::now());
      },
      input);
  // Handshakes are paced to stay well inside the shortest connect deadline.
  std::optional<std::chrono::seconds> shortest;
  for (std::size_t i : targets) shortest = std::min(shortest.value_or(deadlines(i).connect), deadlines(i).connect);
  if (shortest) scheduler.pace_within(*shortest);
  std::vector<char> began(targets.size(), 0);
  scheduler.observe([&](std::size_t k, fanout::WorkerResult* r) {
    if (!r) began[k] = 1;
    on_worker(scheduler, targets[k], r);
  });
  scheduler.add(reaper_);
  if (options_.run_host)
    for (auto* service : options_.run_host->services) scheduler.add(*service);
  if (live_) scheduler.add(*live_);
  jumps_.attach(&scheduler);
  reactor_ = &scheduler;
  auto outcome = scheduler.run();
  reactor_ = nullptr;
  jumps_.attach(nullptr);
  if (live_) scheduler.remove(*live_);
  if (options_.run_host)
    for (auto* service : options_.run_host->services) scheduler.remove(*service);
  scheduler.remove(reaper_);
  // Workers never started end too (for --json, --out-dir's results).
  for (std::size_t k = 0; k < targets.size(); ++k) {
    if (began[k]) continue;
    if (first_failure_) mark_stopped(outcome.results[k]);
    sink_->finished(targets[k], outcome.results[k]);
  }
  sink_->flush();
  return outcome;
}

// A worker started (result null) or ended: the status line, the sinks that
// report workers, and --fail-fast.
void RunContext::on_worker(fanout::Scheduler& scheduler, std::size_t i, fanout::WorkerResult* r) {
  if (!r) {
    running_[i] = 1;
    status_.started(i, std::chrono::steady_clock::now());
    sink_->started(i);
    return;
  }
  running_[i] = 0;
  if (stopped_[i] && r->outcome != fanout::Outcome::ok) mark_stopped(*r);
  status_.finished(i, r->outcome == fanout::Outcome::ok);
  sink_->finished(i, *r);
  if (options_.fail_fast && !first_failure_ && is_failure(r->outcome)) {
    first_failure_ = i;
    first_failure_reason_ = r->reason;
    stopped_ = running_;
    scheduler.stop_all("not started (--fail-fast)");
  }
}

void RunContext::mark_stopped(fanout::WorkerResult& r) const {
  const bool ran = r.outcome != fanout::Outcome::not_started;
  r.outcome = fanout::Outcome::stopped;
  r.reason = std::string(ran ? "stopped" : "not started") + ": " + labels_[*first_failure_] + " failed first (" +
             first_failure_reason_ + ")";
}

int RunContext::finish(const fanout::RunOutcome& run) {
  status_.clear(writer_);
  if (live_) {
    live_->hold_until_quit(signal_fd_);
    live_->close();
  }
  if (leader_) leader_->print(options_.diff);
  else if (gather_) gather_->print(std::nullopt, options_.diff);
  sink_->flush();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  int code = output::exit_code_for(run.results, run.interrupted);
  if (out_dir_) {
    out_dir_->write_results(everyone(), run.results, seconds, code);
    if (out_dir_->incomplete() && code == output::exit_code::ok) code = output::exit_code::command_failed;
  }
  if (json_) json_->summary(run.results, seconds, code);
  writer_.drain_and_stop();
  record_run(options_, labels_, run.results, seconds, code);
  if (run.output_closed || writer_.reader_gone()) return output::exit_code::output_closed;
  const auto mode = options_.brief_summary  ? output::SummaryMode::brief
                    : options_.summary_always ? output::SummaryMode::always
                    : options_.quiet       ? output::SummaryMode::quiet
                                           : output::SummaryMode::automatic;
  std::fputs(output::format_summary(run.results, labels_, seconds, mode).c_str(), stderr);
  if (first_failure_)
    std::fprintf(stderr, "tpush: --fail-fast: %s failed first (%s); the others were stopped\n",
                 labels_[*first_failure_].c_str(), first_failure_reason_.c_str());
  if (out_dir_ && out_dir_->incomplete())
    std::fprintf(stderr, "tpush: --out-dir %s is incomplete (see above)\n", options_.out_dir.c_str());
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
  return code;
}

void RunContext::retry_moved(fanout::RunOutcome& outcome, const Refresh& refresh, const JobFactory& make_job) {
  if (!refresh || outcome.interrupted || outcome.output_closed || first_failure_) return;
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
      slice_gateways_.clear();
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
