// Copies files to or from one worker: an SFTP transfer (upload for cp,
// download for get) on the job's session.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "tpush/fanout/session_job.h"
#include "tpush/ssh/sftp/transfer.h"

namespace tpush::fanout {

class CopyJob final : public SessionJob {
 public:
  // Makes the transfer once the session is ready.
  using TransferFactory = std::function<std::unique_ptr<ssh::SftpTransfer>(ssh::Session&)>;
  // Told the bytes moved so far, and whether the worker is done (for a progress line).
  using ProgressFn = std::function<void(std::uint64_t bytes, bool done)>;

  CopyJob(std::size_t index, ssh::Endpoint endpoint, const ssh::ConnectionSettings& settings,
          Deadlines deadlines, TransferFactory make_transfer, ProgressFn progress);

  // There is no remote command to pass Ctrl-C to: the first one stops the copy,
  // letting an upload remove its temporary file on the worker first.
  void forward_interrupt() override;

 private:
  void start_work() override;
  void advance_work() override;
  util::Wait work_wait() const override { return transfer_->wait(); }
  void release_work() override;
  bool work_clean() const override;
  bool work_may_start_again() const override { return transfer_ && !transfer_->began(); }
  void reset_work() override;
  void report(bool done);

  TransferFactory make_transfer_;
  ProgressFn progress_;
  std::unique_ptr<ssh::SftpTransfer> transfer_;
  bool cancelling_ = false;  // the transfer is cleaning up after the first Ctrl-C
};

}  // namespace tpush::fanout
