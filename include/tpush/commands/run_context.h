// What every subcommand that talks to workers shares: credentials, host-key
// policy, deadlines, the output writer and line multiplexer, the fan-out
// scheduler and the closing summary. A subcommand supplies one Job per worker.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tpush/commands/options.h"
#include "tpush/fanout/deadlines.h"
#include "tpush/fanout/scheduler.h"
#include "tpush/inventory/worker.h"
#include "tpush/output/line_output.h"
#include "tpush/output/writer.h"
#include "tpush/ssh/connection.h"
#include "tpush/ssh/credentials.h"
#include "tpush/ssh/host_key_policy.h"
#include "tpush/ssh/jump_host.h"
#include "tpush/util/child_reaper.h"

namespace tpush::commands {

class RunContext {
 public:
  using JobFactory = std::function<std::unique_ptr<fanout::Job>(std::size_t worker_index)>;

  // Gathers credentials (may prompt once for a passphrase) and loads known_hosts.
  RunContext(const Options& o, std::vector<inventory::Worker> workers, int signal_fd);

  const std::vector<inventory::Worker>& workers() const { return workers_; }
  // The workers' labels, in order.
  const std::vector<std::string>& labels() const { return labels_; }
  // Where and as whom to connect to worker i (-l/-p defaults applied).
  ssh::Endpoint endpoint(std::size_t i) const;
  const ssh::ConnectionSettings& settings() const { return settings_; }
  const fanout::Deadlines& deadlines() const { return deadlines_; }
  output::Writer& writer() { return writer_; }
  // Where the workers' output goes (prefixed lines).
  output::LineOutput& lines() { return lines_; }
  // Runs after every batch of events, after the output is flushed (a progress line).
  void on_events(std::function<void()> fn) { after_events_ = std::move(fn); }

  // Runs make_job(i) for every i in `targets` under the fan-out cap. The
  // outcome's results are indexed like `targets`.
  fanout::RunOutcome run(const std::vector<std::size_t>& targets, const JobFactory& make_job,
                         fanout::InputFeed* input = nullptr);
  // Every worker index, in order.
  std::vector<std::size_t> everyone() const;

  // Resolves the workers again (a fresh TPU describe); empty when they did not
  // come from a cache.
  using Refresh = std::function<std::vector<inventory::Worker>()>;
  // Workers of `outcome` that could not be reached at a cached address get one
  // more try when `refresh` shows that address changed (a TPU recreated or
  // its VMs moved). Nothing happens after an interrupt or a closed output.
  void retry_moved(fanout::RunOutcome& outcome, const Refresh& refresh, const JobFactory& make_job);

  // Flushes the output, prints the summary; returns tpush's exit code.
  int finish(const fanout::RunOutcome& outcome);

 private:
  const Options& options_;
  std::vector<inventory::Worker> workers_;
  int signal_fd_;
  std::chrono::steady_clock::time_point started_;
  std::filesystem::path home_;
  ssh::Credentials credentials_;
  ssh::HostKeyPolicy host_keys_;
  ssh::ConnectionSettings settings_;
  fanout::Deadlines deadlines_;
  std::vector<std::string> labels_;
  std::string default_user_;
  uint16_t default_port_;
  std::size_t fanout_;
  output::Writer writer_;
  output::LineOutput lines_;
  std::function<void()> after_events_;
  util::ChildReaper reaper_;        // proxy commands of workers that ended
  ssh::JumpPool jumps_;             // one session per jump host, shared by its workers
  std::vector<ssh::JumpPool::Hop> jump_chain_;  // -J
};

}  // namespace tpush::commands
