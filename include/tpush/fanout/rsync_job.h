// Runs the local rsync for one worker (`tpush rsync`): a child process whose
// stdout and stderr become the worker's output lines and whose exit status is
// the result. When ssh, under rsync, could not connect, verify the host key or
// log in, the worker is unreachable rather than failed.
#pragma once

#include <array>
#include <optional>
#include <string>

#include "tpush/fanout/output_sink.h"
#include "tpush/fanout/worker_job.h"
#include "tpush/util/child_process.h"

namespace tpush::fanout {

class RsyncJob final : public WorkerJob {
 public:
  // `command`: rsync and its arguments (stdin, stdout, stderr are set here).
  RsyncJob(std::size_t index, util::ChildSpec command, Deadlines deadlines, OutputSink& out);
  ~RsyncJob() override;

  void advance(Clock::time_point now) override;
  void tick(Clock::time_point now) override;
  // Stops rsync (TERM: it removes its temporary file; KILL after a grace);
  // the job ends once the child is gone. The first Ctrl-C does the same.
  void interrupt() override;
  void forward_interrupt() override { interrupt(); }
  int fd() const override { return epoll_fd_; }
  util::Wait wait() const override;
  bool paused_for_output() const override { return paused_; }

  // How long rsync gets between TERM and KILL.
  static constexpr std::chrono::seconds stop_grace{2};

 private:
  void start(Clock::time_point now);
  void stop(Clock::time_point now, Outcome outcome, std::string reason);
  void drain();
  void remember_stderr(std::string_view bytes);
  std::string last_stderr_line() const;
  void conclude();
  void close_pipes();
  void release() override;
  bool reached() const override { return reached_; }

  util::ChildSpec command_;
  OutputSink& out_;
  util::Child child_;
  std::array<int, 2> pipes_{-1, -1};  // rsync's stdout, stderr
  int epoll_fd_ = -1;                 // watches both pipes
  bool paused_ = false;
  bool reached_ = true;
  bool remote_rsync_missing_ = false;
  std::string stderr_tail_, ssh_error_;
  // Set while rsync is being stopped: the result once it is gone.
  std::optional<std::pair<Outcome, std::string>> stopping_;
  std::optional<Clock::time_point> exited_at_;
};

}  // namespace tpush::fanout
