#include "tpush/fanout/rsync_job.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tpush::fanout {

RsyncJob::RsyncJob(std::size_t index, util::ChildSpec command, Deadlines deadlines, OutputSink& out)
    : WorkerJob(index, deadlines), command_(std::move(command)), out_(out) {}

RsyncJob::~RsyncJob() { close_pipes(); }  // a child still running is killed by ~Child

util::Wait RsyncJob::wait() const {
  if (finished() || paused_ || (pipes_[0] < 0 && pipes_[1] < 0)) return util::Wait::none;
  return util::Wait::read;
}

void RsyncJob::advance(Clock::time_point now) {
  if (finished()) return;
  if (!started()) return start(now);
  drain();
  tick(now);
}

void RsyncJob::start(Clock::time_point now) {
  begin(now);
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) return finish(Outcome::failed, std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(err, O_CLOEXEC) != 0) {
    const int e = errno;
    ::close(out[0]);
    ::close(out[1]);
    return finish(Outcome::failed, std::string("pipe: ") + std::strerror(e));
  }
  command_.stdout_fd = out[1];
  command_.stderr_fd = err[1];
  try {
    child_ = util::Child::spawn(command_);
  } catch (const std::exception& e) {
    for (int fd : {out[0], out[1], err[0], err[1]}) ::close(fd);
    return finish(Outcome::failed, e.what());
  }
  ::close(out[1]);
  ::close(err[1]);
  pipes_ = {out[0], err[0]};
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  for (int k = 0; k < 2; ++k) {
    ::fcntl(pipes_[k], F_SETFL, ::fcntl(pipes_[k], F_GETFL) | O_NONBLOCK);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u32 = static_cast<std::uint32_t>(k);
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, pipes_[k], &ev);
  }
}

void RsyncJob::drain() {
  std::array<char, 64 * 1024> buf;
  paused_ = false;
  for (int k = 0; k < 2; ++k) {
    while (pipes_[k] >= 0) {
      if (!out_.accepting()) {
        paused_ = true;
        return;
      }
      const ssize_t n = ::read(pipes_[k], buf.data(), buf.size());
      if (n > 0) {
        const std::string_view bytes(buf.data(), static_cast<std::size_t>(n));
        out_.data(index_, k == 0 ? Stream::out : Stream::err, bytes);
        if (k == 1) remember_stderr(bytes);
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) break;
      ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, pipes_[k], nullptr);
      ::close(pipes_[k]);
      pipes_[k] = -1;
    }
  }
}

void RsyncJob::remember_stderr(std::string_view bytes) {
  stderr_tail_.append(bytes);
  if (stderr_tail_.size() > 8192) stderr_tail_.erase(0, stderr_tail_.size() - 4096);
  if (ssh_error_.empty()) {  // the first line saying why ssh could not get in
    for (const char* mark : {"ssh: ", "Host key verification failed", "Permission denied (", "REMOTE HOST IDENTIFICATION"}) {
      const auto at = stderr_tail_.find(mark);
      if (at == std::string::npos) continue;
      const auto begin = stderr_tail_.rfind('\n', at);
      const auto end = stderr_tail_.find('\n', at);
      if (end == std::string::npos) break;  // wait for the whole line
      const std::size_t from = begin == std::string::npos ? 0 : begin + 1;
      ssh_error_ = stderr_tail_.substr(from, std::min<std::size_t>(end - from, 200));
      break;
    }
  }
  if (stderr_tail_.find("rsync: command not found") != std::string::npos ||
      stderr_tail_.find("rsync: not found") != std::string::npos)
    remote_rsync_missing_ = true;
}

std::string RsyncJob::last_stderr_line() const {
  std::string t = stderr_tail_;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
  const auto nl = t.rfind('\n');
  std::string line = nl == std::string::npos ? t : t.substr(nl + 1);
  if (line.size() > 200) line.resize(200);
  return line;
}

void RsyncJob::tick(Clock::time_point now) {
  if (finished() || !started()) return;
  if (!stopping_ && command_deadline_passed(now, start_time())) stop(now, Outcome::timed_out, timed_out_reason());
  child_.tick(now);
  if (child_.running()) return;
  if (!exited_at_) exited_at_ = now;
  // What it wrote before exiting may still sit in the pipes; a grandchild (ssh)
  // holding them open gets a grace to let go.
  drain();
  if (paused_) return;
  if ((pipes_[0] >= 0 || pipes_[1] >= 0) && now - *exited_at_ < stop_grace) return;
  conclude();
}

void RsyncJob::stop(Clock::time_point now, Outcome outcome, std::string reason) {
  if (!stopping_) stopping_.emplace(outcome, std::move(reason));
  child_.stop(now, stop_grace);  // rsync removes its temporary file on TERM
}

void RsyncJob::interrupt() {
  if (finished()) return;
  if (!started() || !child_.running()) return WorkerJob::interrupt();
  stop(now(), Outcome::interrupted, "interrupted");
}

void RsyncJob::conclude() {
  if (stopping_) return finish(stopping_->first, stopping_->second);
  const int status = child_.status().value_or(0);
  if (WIFSIGNALED(status)) return finish(Outcome::failed, "rsync " + util::describe_wait_status(status));
  const int code = WEXITSTATUS(status);
  if (code == 0) return finish(Outcome::ok, "exit 0", 0);
  if (remote_rsync_missing_)
    return finish(Outcome::failed, "rsync is not installed on the worker (rsync exit " + std::to_string(code) + ")",
                  code);
  const std::string detail = ssh_error_.empty() ? last_stderr_line() : ssh_error_;
  // ssh could not connect, verify the host key or log in: rsync then exits 255,
  // or 12 ("connection unexpectedly closed") depending on timing.
  if (code == 255 || (code == 12 && !ssh_error_.empty())) {
    reached_ = false;
    return finish(Outcome::unreachable, "ssh failed" + (detail.empty() ? "" : ": " + detail), code);
  }
  finish(Outcome::failed, "rsync exit " + std::to_string(code) + (detail.empty() ? "" : ": " + detail), code);
}

void RsyncJob::close_pipes() {
  for (int& p : pipes_)
    if (p >= 0) ::close(p), p = -1;
  if (epoll_fd_ >= 0) ::close(epoll_fd_), epoll_fd_ = -1;
}

void RsyncJob::release() {
  if (started()) out_.end(index_);
  close_pipes();
  child_.signal_group(SIGKILL);  // anything left of its group (ssh)
}

}  // namespace tpush::fanout
