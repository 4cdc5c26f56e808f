// Copies files to or from one worker: a connection, then an SFTP transfer
// (upload for cp, download for get) on its session, with the same deadlines
// as a command (connect deadline, nothing-received rule, keepalives).
#pragma once

#include <functional>
#include <memory>

#include "tpush/fanout/command_job.h"
#include "tpush/fanout/job.h"
#include "tpush/ssh/connection.h"
#include "tpush/ssh/sftp_upload.h"

namespace tpush::output {
class Progress;
class Writer;
}  // namespace tpush::output

namespace tpush::fanout {

class CopyJob final : public Job {
 public:
  // Makes the transfer once the session is ready.
  using TransferFactory = std::function<std::unique_ptr<ssh::SftpTransfer>(LIBSSH2_SESSION*)>;

  // `progress` (may be null) gets this worker's byte count, drawn through `writer`.
  CopyJob(std::size_t index, ssh::Endpoint endpoint, const ssh::ConnectionSettings& settings,
          Deadlines deadlines, TransferFactory make_transfer, output::Progress* progress,
          output::Writer& writer);

  void advance(Clock::time_point now) override;
  void tick(Clock::time_point now) override;
  void interrupt() override;
  // There is no remote command to pass Ctrl-C to: the first one stops the copy,
  // letting an upload remove its temporary file on the worker first.
  void forward_interrupt() override;
  bool finished() const override { return finished_; }
  int fd() const override { return connection_.fd(); }
  ssh::Wait wait() const override;
  bool paused_for_output() const override { return false; }
  WorkerResult result() const override { return result_; }

 private:
  void finish(Outcome outcome, std::string reason);
  void update_progress(bool done);

  std::size_t index_;
  ssh::Connection connection_;
  Deadlines deadlines_;
  TransferFactory make_transfer_;
  std::unique_ptr<ssh::SftpTransfer> transfer_;
  output::Progress* progress_;
  output::Writer& writer_;

  bool started_ = false;
  bool finished_ = false;
  bool cancelling_ = false;  // the transfer is cleaning up after the first Ctrl-C
  Clock::time_point start_, transfer_start_;
  WorkerResult result_;
};

}  // namespace tpush::fanout
