#include "tpush/fanout/command_job.h"

#include <libssh2.h>
#include <spdlog/spdlog.h>

#include "tpush/output/line_output.h"
#include "tpush/output/writer.h"

namespace tpush::fanout {
namespace {

std::string seconds_text(std::chrono::seconds s) { return std::to_string(s.count()) + "s"; }

}  // namespace

CommandJob::CommandJob(std::size_t index, ssh::Endpoint endpoint,
                       const ssh::ConnectionSettings& settings, std::string command,
                       ssh::ExecChannel::Settings channel_settings, Deadlines deadlines,
                       output::LineOutput& out, output::Writer& writer)
    : index_(index),
      connection_(std::move(endpoint), settings),
      command_(std::move(command)),
      channel_settings_(channel_settings),
      deadlines_(deadlines),
      out_(out),
      writer_(writer) {
  sink_.data = [this](int stream, std::string_view bytes) {
    out_.data(index_, stream == 2 ? output::Stream::err : output::Stream::out, bytes);
  };
  sink_.can_accept = [this] { return !writer_.congested() && !writer_.reader_gone(); };
}

ssh::Wait CommandJob::wait() const {
  if (finished_) return ssh::Wait::none;
  if (!channel_) return connection_.wait();
  if (channel_->paused()) return ssh::Wait::none;
  // Data may arrive at any time while streaming; write interest only while
  // libssh2 has a packet half-sent.
  const bool outbound =
      libssh2_session_block_directions(connection_.session()) & LIBSSH2_SESSION_BLOCK_OUTBOUND;
  return outbound ? ssh::Wait::read_write : ssh::Wait::read;
}

bool CommandJob::paused_for_output() const { return channel_ && channel_->paused(); }

void CommandJob::advance(Clock::time_point now) {
  if (finished_) return;
  if (!started_) {
    started_ = true;
    start_ = now;
  }
  connection_.new_turn();
  if (!channel_) {
    connection_.advance();
    if (connection_.phase() == ssh::Connection::Phase::failed)
      return finish(connection_.failure_outcome(), connection_.failure_reason());
    if (connection_.phase() != ssh::Connection::Phase::ready) return;
    if (!connection_.warning().empty()) spdlog::warn("{}", connection_.warning());
    channel_ = std::make_unique<ssh::ExecChannel>(connection_.session(), command_, channel_settings_);
    exec_start_ = alive_reference_ = now;
  }
  const bool was_paused = channel_->paused();
  channel_->advance(sink_);
  if (was_paused && !channel_->paused()) alive_reference_ = now;  // silence while paused is ours
  if (channel_->phase() == ssh::ExecChannel::Phase::done ||
      channel_->phase() == ssh::ExecChannel::Phase::failed)
    finish_from_channel();
}

void CommandJob::finish_from_channel() {
  out_.finish(index_);
  if (channel_->phase() == ssh::ExecChannel::Phase::failed) {
    const auto& err = channel_->error();
    if (channel_->server_hung_up()) return finish(Outcome::lost, "connection lost (" + err + ")");
    return finish(Outcome::failed, err);
  }
  if (!channel_->exit_signal().empty())
    return finish(Outcome::failed, "killed by SIG" + channel_->exit_signal());
  const int status = channel_->exit_status();
  finish(status == 0 ? Outcome::ok : Outcome::failed, "exit " + std::to_string(status), status);
}

void CommandJob::tick(Clock::time_point now) {
  if (finished_ || !started_) return;
  if (!channel_) {
    if (now - start_ >= deadlines_.connect)
      finish(Outcome::timed_out, "connect timed out after " + seconds_text(deadlines_.connect) +
                                     " (" + connection_.phase_name() + ")");
    return;
  }
  if (deadlines_.command && now - exec_start_ >= *deadlines_.command) {
    // Best effort before we hang up: TERM for the command (a pty also turns
    // the hang-up into SIGHUP).
    channel_->send_signal("TERM");
    channel_->advance(sink_);
    out_.finish(index_);
    return finish(Outcome::timed_out, "timed out after " + seconds_text(*deadlines_.command));
  }
  if (channel_->paused()) return;
  const auto silent_limit = deadlines_.alive_interval * deadlines_.alive_count;
  const auto last = std::max(connection_.last_receive(), alive_reference_);
  if (now - last >= silent_limit) {
    out_.finish(index_);
    return finish(Outcome::lost, "connection lost (no response for " +
                                     seconds_text(std::chrono::duration_cast<std::chrono::seconds>(
                                         now - last)) + ")");
  }
  connection_.tick(now);
}

void CommandJob::forward_interrupt() {
  if (finished_ || !channel_) return;
  channel_->interrupt_remote();
  advance(Clock::now());
}

std::optional<std::uint64_t> CommandJob::input_offset() const {
  if (finished_ || !channel_settings_.input) return std::nullopt;
  return channel_ ? channel_->input_offset() : 0;
}

void CommandJob::interrupt() {
  if (finished_) return;
  if (channel_) out_.finish(index_);
  finish(Outcome::interrupted, started_ ? "interrupted" : "not started (interrupted)");
}

void CommandJob::finish(Outcome outcome, std::string reason, int exit_status) {
  if (finished_) return;
  finished_ = true;
  if (channel_ && channel_->phase() != ssh::ExecChannel::Phase::done) channel_->release();
  connection_.abandon();
  result_.outcome = outcome;
  result_.reason = std::move(reason);
  result_.exit_status = exit_status;
  result_.reached = connection_.reached();
  result_.seconds = std::chrono::duration<double>(Clock::now() - start_).count();
}

}  // namespace tpush::fanout
