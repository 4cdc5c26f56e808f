// `tpush shell`: the login shell of one worker on a pseudo-terminal the size
// of the local one, as `ssh HOST` gives it. What is typed goes to it as typed
// (the local terminal is raw: commands/shell_main.cpp), what it prints comes
// back as it is, and the terminal's size follows the local one's.
#pragma once

#include <memory>
#include <optional>

#include "tpush/fanout/output_sink.h"
#include "tpush/fanout/session_job.h"
#include "tpush/ssh/exec_channel.h"

namespace tpush::fanout {

class ShellJob final : public SessionJob {
 public:
  // `input`: the local terminal's keys; `terminal`: the fd whose size the
  // pty follows (checked at every tick).
  ShellJob(std::size_t index, ssh::Endpoint endpoint, const ssh::ConnectionSettings& settings,
           Deadlines deadlines, const ssh::InputSource& input, int terminal, OutputSink& out);

  std::optional<std::uint64_t> input_offset() const override;
  // SIGINT reached tpush itself (the terminal sends ^C as a byte): the shell's
  // terminal gets ^C, as typed.
  void forward_interrupt() override;

 private:
  void start_work() override;
  void advance_work() override;
  util::Wait work_wait() const override;
  void tick_work() override;
  bool work_paused() const override { return channel_ && channel_->paused(); }
  void release_work() override;
  // The shell ended and its channel closed: a persist master keeps the session.
  bool work_clean() const override;
  void follow_size();

  ssh::Channel::Settings channel_settings_;
  int terminal_;
  OutputSink& out_;
  ssh::Channel::Sink sink_;
  std::unique_ptr<ssh::Channel> channel_;
};

}  // namespace tpush::fanout
