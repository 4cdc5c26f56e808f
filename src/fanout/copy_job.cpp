#include "tpush/fanout/copy_job.h"

namespace tpush::fanout {

CopyJob::CopyJob(std::size_t index, ssh::Endpoint endpoint, const ssh::ConnectionSettings& settings,
                 Deadlines deadlines, TransferFactory make_transfer, ProgressFn progress)
    : SessionJob(index, std::move(endpoint), settings, deadlines),
      make_transfer_(std::move(make_transfer)),
      progress_(std::move(progress)) {}

void CopyJob::report(bool done) {
  if (progress_) progress_(transfer_ ? transfer_->bytes_done() : 0, done);
}

void CopyJob::start_work() {
  transfer_ = make_transfer_(ssh_session());
  report(false);
}

void CopyJob::advance_work() {
  transfer_->advance();
  report(false);
  switch (transfer_->phase()) {
    case ssh::SftpTransfer::Phase::running:
      return;
    case ssh::SftpTransfer::Phase::done:
      return finish(Outcome::ok, "ok", 0);
    case ssh::SftpTransfer::Phase::failed:
      if (restart_on_fresh_session()) return;
      if (cancelling_) return finish(Outcome::interrupted, "interrupted");
      if (transfer_->server_hung_up()) return finish(Outcome::lost, lost_reason(transfer_->error()));
      return finish(Outcome::failed, transfer_->error());
  }
}

void CopyJob::forward_interrupt() {
  if (finished()) return;
  if (transfer_ && transfer_->cancel()) {
    cancelling_ = true;
    return;
  }
  interrupt();
}

bool CopyJob::work_clean() const {
  return transfer_ && transfer_->phase() == ssh::SftpTransfer::Phase::done;  // SFTP shut down too
}

void CopyJob::reset_work() {
  transfer_->release();
  transfer_.reset();
}

void CopyJob::release_work() {
  report(true);
  if (!transfer_) return;
  transfer_->release();
  transfer_.reset();
}

}  // namespace tpush::fanout
