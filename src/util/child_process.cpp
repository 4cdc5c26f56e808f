#include "tpush/util/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/process.hpp>
#include <boost/process/extend.hpp>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <system_error>

#include "tpush/util/error.h"
#include "tpush/util/signals.h"

extern char** environ;

namespace tpush::util {
namespace bp = boost::process;

std::filesystem::path find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  return bp::search_path(name).string();
}

namespace {

// The child's environment: ours with `changes` applied, built before the fork
// (the child only swaps the pointer).
class Environment {
 public:
  explicit Environment(const std::vector<std::string>& changes) {
    if (changes.empty()) return;
    for (char** e = environ; e && *e; ++e) {
      const std::string_view entry(*e);
      bool replaced = false;
      for (const auto& c : changes)
        replaced = replaced || entry.substr(0, entry.find('=') + 1) == std::string_view(c).substr(0, c.find('=') + 1);
      if (!replaced) strings_.emplace_back(entry);
    }
    strings_.insert(strings_.end(), changes.begin(), changes.end());
    for (auto& s : strings_) pointers_.push_back(s.data());
    pointers_.push_back(nullptr);
  }
  char** get() { return pointers_.empty() ? nullptr : pointers_.data(); }

 private:
  std::vector<std::string> strings_;
  std::vector<char*> pointers_;
};

}  // namespace

Child Child::spawn(const ChildSpec& spec) {
  const std::filesystem::path exe = find_program(spec.program.string());
  if (exe.empty() || ::access(exe.c_str(), X_OK) != 0)
    throw SetupError("cannot run '" + spec.program.string() + "': " +
                     (exe.empty() ? std::string("not found on PATH") : std::strerror(errno)) +
                     " (install it, or check PATH)");
  const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd < 0) throw SetupError(std::string("cannot open /dev/null: ") + std::strerror(errno));
  auto pick = [null_fd](int fd) { return fd == kDevNull ? null_fd : fd; };
  const int in = pick(spec.stdin_fd), out = pick(spec.stdout_fd), err = pick(spec.stderr_fd);
  Environment env(spec.env);
  char** envp = env.get();

  std::error_code ec;
  bp::child child(exe.string(), bp::args(spec.args), ec,
                  bp::extend::on_exec_setup([in, out, err, envp, own = spec.own_group](auto& exec) {
                    // Only async-signal-safe calls between fork and exec.
                    if (own) ::setpgid(0, 0);
                    if (in != kInherit) ::dup2(in, STDIN_FILENO);
                    if (out != kInherit) ::dup2(out, STDOUT_FILENO);
                    if (err != kInherit) ::dup2(err, STDERR_FILENO);
                    restore_default_signals();
                    if (envp) exec.env = envp;
                  }));
  ::close(null_fd);
  if (ec) throw SetupError("cannot run " + exe.string() + ": " + ec.message());
  const pid_t pid = child.id();
  child.detach();  // reaped by Child, not by Boost
  return Child(pid, spec.own_group);
}

Child::Child(Child&& other) noexcept { *this = std::move(other); }

Child& Child::operator=(Child&& other) noexcept {
  if (this != &other) {
    release();
    pid_ = std::exchange(other.pid_, -1);
    own_group_ = other.own_group_;
    status_ = std::exchange(other.status_, std::nullopt);
    kill_at_ = std::exchange(other.kill_at_, std::nullopt);
  }
  return *this;
}

Child::~Child() { release(); }

void Child::release() {
  if (running()) {
    signal_group(SIGKILL);
    wait();
  }
  pid_ = -1;
}

bool Child::poll() {
  if (pid_ <= 0) return true;
  if (status_) return true;
  int status = 0;
  pid_t r;
  do r = ::waitpid(pid_, &status, WNOHANG);
  while (r < 0 && errno == EINTR);
  if (r == pid_ || (r < 0 && errno == ECHILD)) status_ = r == pid_ ? status : 0;
  return status_.has_value();
}

void Child::signal_group(int signo) const {
  if (pid_ > 0) ::kill(own_group_ ? -pid_ : pid_, signo);
}

void Child::stop(Clock::time_point now, std::chrono::milliseconds grace) {
  if (!running() || kill_at_) return;
  signal_group(SIGTERM);
  kill_at_ = now + grace;
}

void Child::tick(Clock::time_point now) {
  if (poll()) {
    if (kill_at_) signal_group(SIGKILL);  // what is left of its group
    kill_at_.reset();
    return;
  }
  if (kill_at_ && now >= *kill_at_) signal_group(SIGKILL);
}

int Child::wait() {
  while (!status_ && pid_ > 0) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, 0);
    if (r == pid_) status_ = status;
    else if (r < 0 && errno != EINTR) status_ = 0;
  }
  return status_.value_or(0);
}

std::string describe_wait_status(int status) {
  if (WIFSIGNALED(status)) return std::string("killed by SIG") + sigabbrev_np(WTERMSIG(status));
  return "exit " + std::to_string(WEXITSTATUS(status));
}

CapturedRun run_captured(ChildSpec spec, std::chrono::milliseconds timeout, int interrupt_fd) {
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) throw SetupError(std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    const int e = errno;
    ::close(out_pipe[0]);
    ::close(out_pipe[1]);
    throw SetupError(std::string("pipe: ") + std::strerror(e));
  }
  spec.stdout_fd = out_pipe[1];
  spec.stderr_fd = err_pipe[1];
  CapturedRun run;
  Child child;
  try {
    child = Child::spawn(spec);
  } catch (...) {
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]}) ::close(fd);
    throw;
  }
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);

  // The child's exit is an event too (a pidfd), so a child that closed its
  // pipes but runs on is still bounded by the timeout.
  const int pid_fd = static_cast<int>(::syscall(SYS_pidfd_open, child.pid(), 0));
  std::string* sinks[2] = {&run.out, &run.err};
  int fds[2] = {out_pipe[0], err_pipe[0]};
  const auto deadline = Child::Clock::now() + timeout;
  while (fds[0] >= 0 || fds[1] >= 0 || !child.poll()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Child::Clock::now());
    if (left.count() <= 0) {
      run.timed_out = true;
      break;
    }
    pollfd p[4] = {{fds[0], POLLIN, 0}, {fds[1], POLLIN, 0}, {interrupt_fd, POLLIN, 0}, {pid_fd, POLLIN, 0}};
    // Without a pidfd (old kernel), wake every 50 ms to look for the exit.
    const int wait_ms = pid_fd >= 0 || fds[0] >= 0 || fds[1] >= 0 ? static_cast<int>(left.count()) : 50;
    const int n = ::poll(p, 4, wait_ms);
    if (n < 0 && errno != EINTR) break;
    if (interrupt_fd >= 0 && (p[2].revents & POLLIN)) {
      run.interrupted = true;
      break;
    }
    for (int k = 0; k < 2; ++k) {
      if (fds[k] < 0 || !(p[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      char buf[16 * 1024];
      const ssize_t got = ::read(fds[k], buf, sizeof buf);
      if (got > 0) {
        sinks[k]->append(buf, static_cast<std::size_t>(got));
      } else if (got == 0 || errno != EINTR) {
        ::close(fds[k]);
        fds[k] = -1;
      }
    }
  }
  for (int fd : {fds[0], fds[1], pid_fd})
    if (fd >= 0) ::close(fd);
  if (run.timed_out || run.interrupted) {
    child.signal_group(SIGKILL);
    child.wait();
    return run;
  }
  const int status = child.wait();
  if (WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  return run;
}

}  // namespace tpush::util
