// One worker's part in a relayed copy: on its session, the control script
// (relay_script.h) with the setup and then the chain's orders on its stdin,
// its reports read from its stdout; and, when the chain says tpush feeds
// this worker, an exec channel writing the stream into the attempt's FIFO.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tpush/fanout/session_job.h"
#include "tpush/relay/relay_transfer.h"
#include "tpush/ssh/agent/server.h"
#include "tpush/ssh/exec_channel.h"
#include "tpush/ssh/remote_group.h"
#include "tpush/ssh/sftp/transfer.h"

namespace tpush::relay {

class RelayJob final : public fanout::SessionJob {
 public:
  // Told the bytes stored so far and whether the worker is done (the progress line).
  using ProgressFn = std::function<void(std::uint64_t bytes, bool done)>;
  // The copy sent by tpush itself over SFTP, for a worker that cannot run the
  // relay's script (no bash, a /tmp it cannot write, exec refused).
  using Fallback = std::function<std::unique_ptr<ssh::SftpTransfer>(ssh::Session&)>;

  // `hop_address`: where the other workers reach this one ("": where tpush
  // connects; a TPU worker's internal address otherwise).
  RelayJob(std::size_t index, ssh::Endpoint endpoint, const ssh::ConnectionSettings& settings,
           fanout::Deadlines deadlines, RelayTransfer& transfer, ProgressFn progress, Fallback fallback,
           const std::string& hop_address = "");
  ~RelayJob() override;

  // From the transfer: a line for the control script; a feed for `attempt`;
  // the end (every worker is done). Sent at the job's next advance or tick.
  void order(std::string line);
  // A worker this one passes the bytes on to: the agent tpush serves on this
  // session signs one login to it (ssh/agent_server.h).
  void plan_hop(ssh::PlannedHop hop) { agent_policy_.plan(std::move(hop)); }
  void feed(int attempt);
  void quit();

 private:
  // The control script's stdin: the setup, then orders as they come.
  class Orders final : public ssh::InputSource {
   public:
    std::string text;
    bool closed = false;
    std::string_view peek(std::uint64_t offset) const override {
      return offset < text.size() ? std::string_view(text).substr(offset) : std::string_view();
    }
    bool at_end(std::uint64_t offset) const override { return closed && offset >= text.size(); }
  };

  void start_work() override;
  void advance_work() override;
  void tick_work() override;
  util::Wait work_wait() const override;
  // The relay could not start on this worker (`why`): out of the chain, and
  // the copy goes over SFTP instead.
  void fall_back(const std::string& why);
  void advance_fallback();
  // Tells the transfer this worker is out (once). `mid_attempt`: it may have
  // been passing bytes on.
  void detach(bool mid_attempt);
  void release_work() override;
  void forward_interrupt() override { interrupt(); }

  ssh::AgentPolicy& agent_policy() override { return agent_policy_; }
  void on_stdout(std::string_view bytes);
  void on_report(const std::string& line);
  std::string why_failed() const;

  RelayTransfer& transfer_;
  ProgressFn progress_;
  Fallback make_fallback_;
  std::unique_ptr<ssh::SftpTransfer> fallback_;
  std::string fallback_why_;
  Orders orders_;
  std::unique_ptr<ssh::Channel> control_;
  struct Feed {
    int attempt = 0;
    std::unique_ptr<ssh::Channel> channel;
    bool ended = false;  // and its end told to the transfer
  };
  std::string stored_in_;  // "stored in 1.20 s, 80 MiB/s": for the result
  std::vector<Feed> feeds_;
  std::vector<int> feeds_wanted_;  // attempts to feed, not opened yet
  ssh::GroupReport group_;
  ssh::Channel::Sink sink_, feed_sink_;
  std::string partial_line_, stderr_tail_;
  HopTarget where_;  // how the other workers reach this one
  std::string host_key_;      // its host key blob, as tpush's session pinned it
  ssh::LoginIdentity login_;  // what tpush logged in to it with
  bool attached_ = false, detached_ = false, stored_ = false, quitting_ = false;
  std::string failure_;  // its own store failed: why
  std::optional<fanout::Clock::time_point> last_heartbeat_;
  ssh::AgentPolicy agent_policy_;  // what the worker's hops may have signed
  bool agent_checked_ = false;  // whether sshd forwarded the agent, said once
};

}  // namespace tpush::relay
