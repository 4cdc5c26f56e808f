#include "tpush/fanout/command_job.h"

#include "tpush/ssh/session_wait.h"

namespace tpush::fanout {

CommandJob::CommandJob(std::size_t index, ssh::Endpoint endpoint, const ssh::ConnectionSettings& settings,
                       std::string command, ssh::ExecChannel::Settings channel_settings, Deadlines deadlines,
                       OutputSink& out)
    : SessionJob(index, std::move(endpoint), settings, deadlines),
      command_(std::move(command)),
      channel_settings_(channel_settings),
      out_(out) {
  sink_.data = [this](int stream, std::string_view bytes) {
    out_.data(index_, stream == 2 ? Stream::err : Stream::out, bytes);
  };
  sink_.can_accept = [this] { return out_.accepting(); };
}

void CommandJob::start_work(LIBSSH2_SESSION* session) {
  channel_ = std::make_unique<ssh::ExecChannel>(session, command_, channel_settings_);
}

util::Wait CommandJob::work_wait() const {
  if (channel_->paused()) return util::Wait::none;
  // Data may arrive at any time while streaming; write interest only while
  // libssh2 has a packet half-sent.
  return ssh::sending(session()) ? util::Wait::read_write : util::Wait::read;
}

void CommandJob::advance_work() {
  channel_->advance(sink_);
  if (channel_->phase() == ssh::ExecChannel::Phase::done ||
      channel_->phase() == ssh::ExecChannel::Phase::failed)
    finish_from_channel();
}

void CommandJob::finish_from_channel() {
  if (channel_->phase() == ssh::ExecChannel::Phase::failed) {
    const auto& err = channel_->error();
    if (channel_->server_hung_up()) return finish(Outcome::lost, lost_reason(err));
    return finish(Outcome::failed, err);
  }
  if (!channel_->exit_signal().empty())
    return finish(Outcome::failed, "killed by SIG" + channel_->exit_signal(), -1, channel_->exit_signal());
  const int status = channel_->exit_status();
  finish(status == 0 ? Outcome::ok : Outcome::failed, "exit " + std::to_string(status), status);
}

void CommandJob::before_timeout() {
  // Best effort before we hang up: TERM for the command (a pty also turns the
  // hang-up into SIGHUP).
  channel_->send_signal("TERM");
  channel_->advance(sink_);
}

void CommandJob::forward_interrupt() {
  if (finished()) return;
  if (!channel_) return interrupt();  // still connecting: its command must not start now
  channel_->interrupt_remote();
  advance(Clock::now());
}

std::optional<std::uint64_t> CommandJob::input_offset() const {
  if (finished() || !channel_settings_.input) return std::nullopt;
  return channel_ ? channel_->input_offset() : 0;
}

void CommandJob::release_work() {
  if (!channel_) return;
  out_.end(index_);  // the last line without a newline, if any
  if (channel_->phase() != ssh::ExecChannel::Phase::done) channel_->release();
}

}  // namespace tpush::fanout
