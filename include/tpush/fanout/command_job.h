// Runs one command on one worker: connection, channel, output, deadlines.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "tpush/fanout/job.h"
#include "tpush/ssh/connection.h"
#include "tpush/ssh/exec_channel.h"

namespace tpush::output {
class LineOutput;
class Writer;
}  // namespace tpush::output

namespace tpush::fanout {

struct Deadlines {
  std::chrono::seconds connect{10};               // connect + handshake + auth
  std::optional<std::chrono::seconds> command;    // from exec to exit; none = no limit
  std::chrono::seconds alive_interval{5};         // keepalive period
  int alive_count = 3;                            // silent periods before "lost"
};

class CommandJob final : public Job {
 public:
  CommandJob(std::size_t index, ssh::Endpoint endpoint, const ssh::ConnectionSettings& settings,
             std::string command, ssh::ExecChannel::Settings channel_settings, Deadlines deadlines,
             output::LineOutput& out, output::Writer& writer);

  void advance(Clock::time_point now) override;
  void tick(Clock::time_point now) override;
  void interrupt() override;
  void forward_interrupt() override;
  std::optional<std::uint64_t> input_offset() const override;
  bool finished() const override { return finished_; }
  int fd() const override { return connection_.fd(); }
  ssh::Wait wait() const override;
  bool paused_for_output() const override;
  bool connecting() const override { return !finished_ && !channel_; }
  WorkerResult result() const override { return result_; }

 private:
  void finish(Outcome outcome, std::string reason, int exit_status = -1);
  void finish_from_channel();

  std::size_t index_;
  ssh::Connection connection_;
  std::unique_ptr<ssh::ExecChannel> channel_;
  std::string command_;
  ssh::ExecChannel::Settings channel_settings_;
  Deadlines deadlines_;
  output::LineOutput& out_;
  output::Writer& writer_;
  ssh::ExecChannel::Sink sink_;

  bool started_ = false;
  bool finished_ = false;
  Clock::time_point start_, exec_start_, alive_reference_;
  WorkerResult result_;
};

}  // namespace tpush::fanout
