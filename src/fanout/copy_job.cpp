#include "tpush/fanout/copy_job.h"

#include <spdlog/spdlog.h>

#include "tpush/output/progress.h"
#include "tpush/output/writer.h"

namespace tpush::fanout {
namespace {

std::string seconds_text(std::chrono::seconds s) { return std::to_string(s.count()) + "s"; }

}  // namespace

CopyJob::CopyJob(std::size_t index, ssh::Endpoint endpoint, const ssh::ConnectionSettings& settings,
                 Deadlines deadlines, TransferFactory make_transfer, output::Progress* progress,
                 output::Writer& writer)
    : index_(index),
      connection_(std::move(endpoint), settings),
      deadlines_(deadlines),
      make_transfer_(std::move(make_transfer)),
      progress_(progress),
      writer_(writer) {}

ssh::Wait CopyJob::wait() const {
  if (finished_) return ssh::Wait::none;
  if (!transfer_) return connection_.wait();
  return transfer_->wait();
}

void CopyJob::update_progress(bool done) {
  if (!progress_) return;
  auto& w = progress_->worker(index_);
  w.started = true;
  if (transfer_) w.bytes = transfer_->bytes_done();
  w.done = w.done || done;
}

void CopyJob::advance(Clock::time_point now) {
  if (finished_) return;
  if (!started_) {
    started_ = true;
    start_ = now;
    update_progress(false);
  }
  connection_.new_turn();
  if (!transfer_) {
    connection_.advance();
    if (connection_.phase() == ssh::Connection::Phase::failed)
      return finish(connection_.failure_outcome(), connection_.failure_reason());
    if (connection_.phase() != ssh::Connection::Phase::ready) return;
    if (!connection_.warning().empty()) spdlog::warn("{}", connection_.warning());
    transfer_ = make_transfer_(connection_.session());
    transfer_start_ = now;
  }
  transfer_->advance();
  update_progress(false);
  switch (transfer_->phase()) {
    case ssh::SftpTransfer::Phase::running:
      return;
    case ssh::SftpTransfer::Phase::done:
      return finish(Outcome::ok, "ok");
    case ssh::SftpTransfer::Phase::failed:
      if (cancelling_) return finish(Outcome::interrupted, "interrupted");
      if (transfer_->server_hung_up()) return finish(Outcome::lost, "connection lost (" + transfer_->error() + ")");
      return finish(Outcome::failed, transfer_->error());
  }
}

void CopyJob::tick(Clock::time_point now) {
  if (progress_) progress_->poll(writer_, now);
  if (finished_ || !started_) return;
  if (!transfer_) {
    if (now - start_ >= deadlines_.connect)
      finish(Outcome::timed_out, "connect timed out after " + seconds_text(deadlines_.connect) + " (" +
                                     connection_.phase_name() + ")");
    return;
  }
  if (deadlines_.command && now - transfer_start_ >= *deadlines_.command)
    return finish(Outcome::timed_out, "timed out after " + seconds_text(*deadlines_.command));
  const auto silent_limit = deadlines_.alive_interval * deadlines_.alive_count;
  const auto last = std::max(connection_.last_receive(), transfer_start_);
  if (now - last >= silent_limit)
    return finish(Outcome::lost, "connection lost (no response for " +
                                     seconds_text(std::chrono::duration_cast<std::chrono::seconds>(now - last)) +
                                     ")");
  connection_.tick(now);
}

void CopyJob::forward_interrupt() {
  if (finished_) return;
  if (transfer_ && transfer_->cancel()) {
    cancelling_ = true;
    return;
  }
  interrupt();
}

void CopyJob::interrupt() {
  if (finished_) return;
  finish(Outcome::interrupted, started_ ? "interrupted" : "not started (interrupted)");
}

void CopyJob::finish(Outcome outcome, std::string reason) {
  if (finished_) return;
  finished_ = true;
  update_progress(true);
  if (transfer_) transfer_->release();
  transfer_.reset();
  connection_.abandon();
  result_.outcome = outcome;
  result_.reason = std::move(reason);
  result_.exit_status = outcome == Outcome::ok ? 0 : -1;
  result_.reached = connection_.reached();
  result_.seconds = std::chrono::duration<double>(Clock::now() - start_).count();
}

}  // namespace tpush::fanout
