// Runs one command on one worker: an exec channel on the job's session, its
// output into the sink, its exit status as the result.
#pragma once

#include <memory>
#include <string>

#include "tpush/fanout/output_sink.h"
#include "tpush/fanout/session_job.h"
#include "tpush/ssh/exec_channel.h"

namespace tpush::fanout {

class CommandJob final : public SessionJob {
 public:
  CommandJob(std::size_t index, ssh::Endpoint endpoint, const ssh::ConnectionSettings& settings,
             std::string command, ssh::ExecChannel::Settings channel_settings, Deadlines deadlines,
             OutputSink& out);

  // First Ctrl-C: ^C through the pty, or a signal request.
  void forward_interrupt() override;
  std::optional<std::uint64_t> input_offset() const override;

 private:
  void start_work(LIBSSH2_SESSION* session) override;
  void advance_work() override;
  util::Wait work_wait() const override;
  bool work_paused() const override { return channel_ && channel_->paused(); }
  void before_timeout() override;
  void release_work() override;
  void finish_from_channel();

  std::unique_ptr<ssh::ExecChannel> channel_;
  std::string command_;
  ssh::ExecChannel::Settings channel_settings_;
  OutputSink& out_;
  ssh::ExecChannel::Sink sink_;
};

}  // namespace tpush::fanout
