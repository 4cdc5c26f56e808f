#include "tpush/fanout/shell_job.h"

#include "tpush/util/terminal.h"

namespace tpush::fanout {

ShellJob::ShellJob(std::size_t index, ssh::Endpoint endpoint, const ssh::ConnectionSettings& settings,
                   Deadlines deadlines, const ssh::InputSource& input, int terminal, OutputSink& out)
    : SessionJob(index, std::move(endpoint), settings, deadlines), terminal_(terminal), out_(out) {
  channel_settings_.pty = true;
  channel_settings_.input = &input;
  if (const auto size = util::terminal_size(terminal_)) {
    channel_settings_.columns = size->first;
    channel_settings_.rows = size->second;
  }
  // A pty merges the shell's stderr into its stdout: one stream, as it comes.
  sink_.data = [this](int stream, std::string_view bytes) {
    out_.data(index_, stream == 2 ? Stream::err : Stream::out, bytes);
  };
  sink_.can_accept = [this] { return out_.accepting(); };
}

void ShellJob::start_work() {
  out_.connected(index_);
  channel_ = ssh_session().open_channel(std::string(), channel_settings_);
}

void ShellJob::advance_work() {
  channel_->advance(sink_);
  if (channel_->ended()) finish_from(*channel_);
}

util::Wait ShellJob::work_wait() const {
  if (channel_->paused()) return util::Wait::none;
  return ssh_session().sending() || channel_->requests_pending() ? util::Wait::read_write : util::Wait::read;
}

// The local terminal's size, read at every tick (no SIGWINCH handler: signals
// are util/signals.cpp's alone), passed on when it changed.
void ShellJob::tick_work() {
  if (!channel_ || channel_->ended()) return;
  follow_size();
  if (channel_->requests_pending()) advance_work();
}

void ShellJob::follow_size() {
  if (const auto size = util::terminal_size(terminal_)) channel_->resize(size->first, size->second);
}

void ShellJob::forward_interrupt() {
  if (channel_ && !channel_->ended()) channel_->interrupt_remote();
}

std::optional<std::uint64_t> ShellJob::input_offset() const {
  if (finished()) return std::nullopt;
  return channel_ ? channel_->input_offset() : 0;
}

void ShellJob::release_work() {
  out_.end(index_);
  if (channel_ && channel_->phase() != ssh::Channel::Phase::done) channel_->release();
}

bool ShellJob::work_clean() const { return channel_ && channel_->phase() == ssh::Channel::Phase::done; }

}  // namespace tpush::fanout
