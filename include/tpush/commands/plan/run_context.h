// What every subcommand that talks to workers shares: credentials, host-key
// policy, deadlines, the output (prefixed lines, -b, --leader, --json,
// --out-dir, the status line), the fan-out scheduler, --fail-fast, the
// closing summary and the run record. A subcommand supplies one Job per worker.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tpush/commands/cli/options.h"
#include "tpush/commands/plan/worker_reach.h"
#include "tpush/fanout/deadlines.h"
#include "tpush/fanout/scheduler.h"
#include "tpush/inventory/worker.h"
#include "tpush/output/gather_output.h"
#include "tpush/output/json_output.h"
#include "tpush/output/leader_output.h"
#include "tpush/output/line_output.h"
#include "tpush/output/live/view.h"
#include "tpush/output/out_dir.h"
#include "tpush/output/status_line.h"
#include "tpush/output/writer.h"
#include "tpush/ssh/connection.h"
#include "tpush/ssh/identity/credentials.h"
#include "tpush/ssh/identity/host_key_policy.h"
#include "tpush/ssh/way/jump_pool.h"
#include "tpush/util/child_reaper.h"

namespace tpush::commands {

class RunContext {
 public:
  using JobFactory = std::function<std::unique_ptr<fanout::Job>(std::size_t worker_index)>;

  // Settles how each worker is reached (ssh_config and all), gathers the keys
  // they use (may prompt once per encrypted key) and loads known_hosts.
  RunContext(const Options& o, std::vector<inventory::Worker> workers, int signal_fd);
  ~RunContext();
  RunContext(const RunContext&) = delete;
  RunContext& operator=(const RunContext&) = delete;

  const std::vector<inventory::Worker>& workers() const { return workers_; }
  // The workers' labels, in order.
  const std::vector<std::string>& labels() const { return labels_; }
  // How worker i is reached, with where each value came from.
  const Reach& reach(std::size_t i) const { return reaches_[i]; }
  // "alice@w3": as whom worker i logs in, for each worker.
  std::vector<std::string> logins() const;
  // There is a terminal to ask the user for a secret on (not --live's).
  bool can_ask() const;
  // Asks on the terminal, the status line out of the way; nullopt when it cannot.
  std::optional<std::string> ask_secret(const std::string& prompt);
  // Where, as whom and how to connect to worker i.
  ssh::Endpoint endpoint(std::size_t i);
  const ssh::ConnectionSettings& settings() const { return settings_; }
  // Worker i's deadlines (its connect timeout and keepalives may come from ssh_config).
  fanout::Deadlines deadlines(std::size_t i) const;
  output::Writer& writer() { return writer_; }
  // Where the workers' output goes (prefixed lines, or what the options chose).
  fanout::OutputSink& output() { return *sink_; }
  // Runs after every batch of events, after the output is flushed, instead
  // of the status line (cp and get draw their own progress).
  void on_events(std::function<void()> fn) { after_events_ = std::move(fn); }
  // The event loop of each run(), while it runs (null after): for jobs that
  // drive more than their session's socket (a forward's listeners).
  util::Reactor* reactor() const { return reactor_; }

  // Runs make_job(i) for every i in `targets` under the fan-out cap. The
  // outcome's results are indexed like `targets`.
  fanout::RunOutcome run(const std::vector<std::size_t>& targets, const JobFactory& make_job,
                         fanout::InputFeed* input = nullptr);
  // Every worker index, in order.
  std::vector<std::size_t> everyone() const;
  // How many workers run at once (-f, or every worker up to the open-file limit).
  std::size_t fanout() const { return fanout_; }

  // Resolves the workers again (a fresh TPU describe); empty when they did not
  // come from a cache.
  using Refresh = std::function<std::vector<inventory::Worker>()>;
  // Workers of `outcome` that could not be reached at a cached address get one
  // more try when `refresh` shows that address changed (a TPU recreated or
  // its VMs moved). Nothing happens after an interrupt or a closed output.
  void retry_moved(fanout::RunOutcome& outcome, const Refresh& refresh, const JobFactory& make_job);

  // Flushes the output (prints gathered groups, results.json, the JSON
  // summary), prints the summary, records the run; returns tpush's exit code.
  int finish(const fanout::RunOutcome& outcome);

 private:
  // Worker i reached its own way (directly, its proxy command or jump hosts).
  ssh::Endpoint own_endpoint(std::size_t i);
  ssh::Endpoint endpoint_for(const Reach& r, const std::string& label);
  // --tunnel-through-iap: the workers of `slice` in this run, each reached its
  // own way, as the gateways that carry the slice (made once per run).
  const std::vector<ssh::JumpPool::Hop>& slice_gateways(const std::string& slice);
  ssh::HostKeyPolicy* host_keys_for(const Reach& r);
  void choose_output();
  std::vector<output::WorkerIdentity> identities() const;
  void on_worker(fanout::Scheduler& scheduler, std::size_t worker, fanout::WorkerResult* result);
  void mark_stopped(fanout::WorkerResult& r) const;
  ssh::Identities identities_for(const Reach& r) const;
  std::vector<ssh::JumpPool::Hop> hops_for(const Reach& r);

  const Options& options_;
  ReachPlanner planner_;
  std::vector<inventory::Worker> workers_;
  std::vector<Reach> reaches_;
  int signal_fd_;
  std::chrono::steady_clock::time_point started_;
  std::filesystem::path home_;
  ssh::Credentials credentials_;
  // One policy per distinct rule and set of known_hosts files (usually one).
  std::vector<std::pair<std::string, std::unique_ptr<ssh::HostKeyPolicy>>> host_keys_;
  ssh::ConnectionSettings settings_;
  std::vector<std::string> labels_;
  std::size_t fanout_;
  output::Writer writer_;
  output::LineOutput lines_;
  std::unique_ptr<output::GatherOutput> gather_;  // -b, --leader
  std::unique_ptr<output::LeaderOutput> leader_;  // --leader
  std::unique_ptr<output::JsonOutput> json_;      // --json
  std::unique_ptr<output::OutDir> out_dir_;       // --out-dir
  int tty_ = -1;                                   // --live: the terminal it draws on
  std::unique_ptr<output::LiveView> live_;        // --live
  fanout::OutputSink* sink_ = &lines_;            // the outermost of the above
  output::StatusLine status_;
  std::function<void()> after_events_;
  util::Reactor* reactor_ = nullptr;
  // --fail-fast: the first worker that failed, and the workers running then.
  std::optional<std::size_t> first_failure_;
  std::string first_failure_reason_;
  std::vector<char> running_, stopped_;
  util::ChildReaper reaper_;        // proxy commands of workers that ended
  ssh::JumpPool own_jumps_;         // one session per jump host, shared by its workers
  ssh::JumpPool& jumps_;            // those, or a persist master's kept ones
  std::map<std::string, std::vector<ssh::JumpPool::Hop>> slice_gateways_;
};

}  // namespace tpush::commands
