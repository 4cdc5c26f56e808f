#include "tpush/fanout/command_job.h"

#include <utility>

#include "tpush/ssh/session_wait.h"

namespace tpush::fanout {
namespace {

// The stop channels' output (there is none) goes nowhere.
const ssh::ExecChannel::Sink kDiscard{[](int, std::string_view) {}, [] { return true; }};

bool ended(const ssh::ExecChannel& c) {
  return c.phase() == ssh::ExecChannel::Phase::done || c.phase() == ssh::ExecChannel::Phase::failed;
}

}  // namespace

CommandJob::CommandJob(std::size_t index, ssh::Endpoint endpoint, const ssh::ConnectionSettings& settings,
                       std::string command, ssh::ExecChannel::Settings channel_settings, Deadlines deadlines,
                       OutputSink& out)
    : SessionJob(index, std::move(endpoint), settings, deadlines),
      command_(std::move(command)),
      channel_settings_(channel_settings),
      out_(out) {
  if (!channel_settings_.pty) {
    group_.emplace();
    // A session a persist master may keep gets the connection's guardian.
    command_ = ssh::with_group_report(
        command_, settings.pool ? ssh::HangUpWatch::per_connection : ssh::HangUpWatch::per_command);
  }
  sink_.data = [this](int stream, std::string_view bytes) {
    if (stream == 2) return stderr_data(bytes);
    out_.data(index_, Stream::out, bytes);
  };
  sink_.can_accept = [this] { return out_.accepting(); };
}

void CommandJob::stderr_data(std::string_view bytes) {
  if (!group_ || group_->settled()) return out_.data(index_, Stream::err, bytes);
  const std::string own = group_->filter(bytes);
  if (!own.empty()) out_.data(index_, Stream::err, own);
  if (!group_->settled()) return;
  for (const auto& signal : std::exchange(queued_signals_, {})) signal_group(signal);
}

void CommandJob::start_work(LIBSSH2_SESSION* session) {
  channel_ = std::make_unique<ssh::ExecChannel>(session, command_, channel_settings_);
}

bool CommandJob::stops_pending() const {
  for (const auto& stop : stops_)
    if (!ended(*stop)) return true;
  return false;
}

util::Wait CommandJob::work_wait() const {
  if (channel_->paused() && !stops_pending()) return util::Wait::none;
  // Data may arrive at any time while streaming; write interest only while
  // libssh2 has a packet half-sent.
  return ssh::sending(session()) ? util::Wait::read_write : util::Wait::read;
}

void CommandJob::advance_work() {
  for (auto& stop : stops_) stop->advance(kDiscard);
  channel_->advance(sink_);
  if (ended(*channel_)) return finish_from_channel();
  // -u: the group has its TERM; the connection can go (the watchdog sends HUP
  // to whatever is left).
  if (timing_out_ && !stops_pending()) finish(Outcome::timed_out, timed_out_reason());
}

void CommandJob::finish_from_channel() {
  if (timing_out_) return finish(Outcome::timed_out, timed_out_reason());
  if (channel_->phase() == ssh::ExecChannel::Phase::failed) {
    if (restart_on_fresh_session()) return;
    const auto& err = channel_->error();
    if (channel_->server_hung_up()) return finish(Outcome::lost, lost_reason(err));
    return finish(Outcome::failed, err);
  }
  if (!channel_->exit_signal().empty())
    return finish(Outcome::failed, "killed by SIG" + channel_->exit_signal(), -1, channel_->exit_signal());
  const int status = channel_->exit_status();
  finish(status == 0 ? Outcome::ok : Outcome::failed, "exit " + std::to_string(status), status);
}

bool CommandJob::signal_group(const std::string& signal) {
  if (!group_) return false;
  if (!group_->settled()) {
    queued_signals_.push_back(signal);
    return true;
  }
  if (!group_->pgid()) return false;
  stops_.push_back(std::make_unique<ssh::ExecChannel>(
      session(), ssh::group_signal_command(*group_->pgid(), signal), ssh::ExecChannel::Settings{}));
  stops_.back()->advance(kDiscard);
  return true;
}

bool CommandJob::before_timeout() {
  // TERM for the command's process group (and the hang-up after it); with a
  // pty, or without the group's tag, a signal request (which sshd refuses for
  // root) and the hang-up (SIGHUP through a pty).
  if (group_ && group_->pgid() && signal_group("TERM")) {
    timing_out_ = true;
    return true;
  }
  channel_->send_signal("TERM");
  channel_->advance(sink_);
  return false;
}

void CommandJob::forward_interrupt() {
  if (finished()) return;
  if (!channel_) return interrupt();  // still connecting: its command must not start now
  // Before the group's tag has come, also a signal request: it reaches a
  // non-root login's command even if the tag never comes.
  const bool known = group_ && group_->pgid();
  if (!known) channel_->interrupt_remote();
  if (!channel_settings_.pty) signal_group("INT");
  advance(Clock::now());
}

std::optional<std::uint64_t> CommandJob::input_offset() const {
  if (finished() || !channel_settings_.input) return std::nullopt;
  return channel_ ? channel_->input_offset() : 0;
}

bool CommandJob::work_clean() const {
  if (!channel_ || channel_->phase() != ssh::ExecChannel::Phase::done || timing_out_) return false;
  for (const auto& stop : stops_)
    if (stop->phase() != ssh::ExecChannel::Phase::done) return false;
  return true;
}

bool CommandJob::work_asked_nothing() const { return channel_ && !channel_->command_sent() && stops_.empty(); }

void CommandJob::reset_work() {
  channel_->release();
  channel_.reset();
}

void CommandJob::release_work() {
  for (auto& stop : stops_)
    if (stop->phase() != ssh::ExecChannel::Phase::done) stop->release();
  if (!channel_) return;
  if (group_) {  // a line that looked like the start of the tag, then the command ended
    const std::string held = group_->flush();
    if (!held.empty()) out_.data(index_, Stream::err, held);
  }
  out_.end(index_);  // the last line without a newline, if any
  if (channel_->phase() != ssh::ExecChannel::Phase::done) channel_->release();
}

}  // namespace tpush::fanout
