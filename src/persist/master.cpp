#include "tpush/persist/master.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>

#include "tpush/output/exit_codes.h"
#include "tpush/persist/messages.h"
#include "tpush/ssh/kept_sessions.h"
#include "tpush/util/signals.h"
#include "tpush/util/terminal.h"

extern char** environ;

namespace tpush::persist {
namespace {

using Clock = std::chrono::steady_clock;

// How long the master waits for a client it said "exit" to to hang up, so a
// signal that client forwarded late never reaches the next client's run.
constexpr int kHangUpWaitMs = 2000;

// The process environment, the client's for each run. An array is never freed
// while a name-lookup thread of an earlier run may still read it (getaddrinfo
// reads RES_OPTIONS and the like; an abandoned lookup runs on): a replaced
// array is kept for a minute, longer than any resolver's timeouts.
class Environments {
 public:
  Environments() : own_(environ) {}
  void use(std::vector<std::string> vars) {
    auto next = std::make_unique<Array>();
    next->strings = std::move(vars);
    for (auto& v : next->strings)
      if (v.find('=') != std::string::npos) next->pointers.push_back(v.data());
    next->pointers.push_back(nullptr);
    environ = next->pointers.data();
    retire(std::exchange(current_, std::move(next)));
  }
  void use_own() {
    environ = own_;
    retire(std::move(current_));
  }

 private:
  struct Array {
    std::vector<std::string> strings;
    std::vector<char*> pointers;
    Clock::time_point retired{};
  };
  void retire(std::unique_ptr<Array> old) {
    const auto now = Clock::now();
    std::erase_if(retired_, [now](const auto& a) { return now - a->retired > std::chrono::minutes(1); });
    if (!old) return;
    old->retired = now;
    retired_.push_back(std::move(old));
  }
  char** own_;
  std::unique_ptr<Array> current_;
  std::vector<std::unique_ptr<Array>> retired_;
};

// Tells clients that come during a run to run directly.
class BusyAnswer final : public util::Pollable {
 public:
  explicit BusyAnswer(int listen_fd) : fd_(listen_fd) {}
  int fd() const override { return fd_; }
  util::Wait wait() const override { return util::Wait::read; }
  void advance(Clock::time_point) override {
    for (int conn; (conn = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0;) {
      send_message(conn, {"busy"});
      ::close(conn);
    }
  }
  void tick(Clock::time_point) override {}

 private:
  int fd_;
};

// The client's connection during its run: when it ends (the client was
// killed), the run stops as on a hang-up; while the client is stopped
// (Ctrl-Z: "stop" until "cont"), the run waits, as a stopped tpush would.
class ClientWatch final : public util::Pollable {
 public:
  explicit ClientWatch(int conn) : fd_(conn) {}
  int fd() const override { return gone_ ? -1 : fd_; }
  util::Wait wait() const override { return gone_ ? util::Wait::none : util::Wait::read; }
  void advance(Clock::time_point) override {
    for (bool stopped = false;;) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, stopped ? -1 : 0) == 0) return;
      auto m = receive_message(fd_);
      if (!m) {
        if (errno == EAGAIN || errno == EINTR) continue;
        gone_ = true;
        ::raise(SIGHUP);  // blocked: the run's signalfd reads it
        return;
      }
      close_fds(*m);
      if (!m->fields.empty() && m->fields[0] == "stop") stopped = true;
      if (!m->fields.empty() && m->fields[0] == "cont") stopped = false;
    }
  }
  void tick(Clock::time_point) override {}

 private:
  int fd_;
  bool gone_ = false;
};

class Master {
 public:
  Master(std::string socket, std::string lock, std::chrono::seconds idle)
      : socket_(std::move(socket)), lock_(std::move(lock)), idle_(idle) {}
  ~Master();

  // False when another master holds the lock (it serves these workers).
  bool start();
  int serve(const RunCommandLine& run);

 private:
  void serve_client(int conn, const RunCommandLine& run);
  void run_for(int conn, Message& m, const RunCommandLine& run);
  void send_held(int conn);
  void drain_signals();

  std::string socket_, lock_;
  std::chrono::seconds idle_;
  Environments env_;
  util::SignalScope signals_;
  int lock_fd_ = -1, listen_fd_ = -1;
  ino_t socket_inode_ = 0;
  ssh::KeptSessions pool_;
  bool done_ = false;
};

Master::~Master() {
  pool_.clear();
  struct stat st {};
  // Only our own socket: a newer master may have taken the name.
  if (listen_fd_ >= 0 && ::stat(socket_.c_str(), &st) == 0 && st.st_ino == socket_inode_) ::unlink(socket_.c_str());
  if (listen_fd_ >= 0) ::close(listen_fd_);
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

bool Master::start() {
  lock_fd_ = ::open(lock_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (lock_fd_ < 0 || ::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) return false;
  ::unlink(socket_.c_str());  // a master that died left it
  listen_fd_ = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);  // accepts never wait
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, socket_.c_str(), sizeof(addr.sun_path) - 1);
  const mode_t old = ::umask(0177);  // the socket is 0600 from the start
  const int rc = ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  ::umask(old);
  if (rc != 0 || ::listen(listen_fd_, 64) != 0) return false;
  struct stat st {};
  if (::stat(socket_.c_str(), &st) == 0) socket_inode_ = st.st_ino;
  return true;
}

int Master::serve(const RunCommandLine& run) {
  auto idle_since = Clock::now();
  while (!done_) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {signals_.fd(), POLLIN, 0}};
    ::poll(fds, 2, 1000);
    const auto now = Clock::now();
    pool_.tick(now);
    if (fds[1].revents & POLLIN) {
      const auto pending = util::drain_signals(signals_.fd());
      if (pending.terminate || pending.hang_up) done_ = true;
    }
    if (!done_ && (fds[0].revents & POLLIN)) {
      const int conn = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);  // blocking, unlike the listener
      if (conn >= 0) {
        serve_client(conn, run);
        ::close(conn);
        idle_since = Clock::now();
      }
    }
    if (Clock::now() - idle_since >= idle_) done_ = true;
  }
  return 0;
}

void Master::serve_client(int conn, const RunCommandLine& run) {
  const auto peer = peer_of(conn);
  if (!peer || peer->uid != ::getuid()) return;  // only its own user; others get nothing
  if (!send_message(conn, {"hello"})) return;
  pollfd p{conn, POLLIN, 0};
  if (::poll(&p, 1, 5000) <= 0) return;
  auto m = receive_message(conn);
  if (!m || m->fields.empty()) return;
  if (m->fields[0] == "run") return run_for(conn, *m, run);
  close_fds(*m);
  if (m->fields[0] == "disconnect") {
    send_held(conn);
    done_ = true;
  }
}

void Master::send_held(int conn) {
  std::vector<std::string> fields{"held", std::to_string(::getpid())};
  const auto now = Clock::now();
  for (const auto& h : pool_.held())
    fields.push_back(h.name + " (idle " +
                     std::to_string(std::chrono::duration_cast<std::chrono::seconds>(now - h.idle_since).count()) +
                     "s)");
  send_message(conn, fields);
}

// "run" PERSIST UMASK ARGC ARGV... ENV..., with fds cwd, stdin, stdout, stderr
// and, when the client has one, its terminal.
void Master::run_for(int conn, Message& m, const RunCommandLine& run) {
  const auto& f = m.fields;
  std::size_t argc = 0;
  if (f.size() < 4 || m.fds.size() < 4 || m.fds.size() > 5 || (argc = std::strtoul(f[3].c_str(), nullptr, 10)) == 0 ||
      f.size() < 4 + argc) {
    close_fds(m);
    return;
  }
  idle_ = std::chrono::seconds(std::max(1L, std::strtol(f[1].c_str(), nullptr, 10)));
  const std::vector<std::string> argv(f.begin() + 4, f.begin() + 4 + static_cast<long>(argc));

  int saved[3];
  for (int i = 0; i < 3; ++i) {
    saved[i] = ::fcntl(i, F_DUPFD_CLOEXEC, 3);
    ::dup2(m.fds[1 + i], i);
  }
  const bool in_dir = ::fchdir(m.fds[0]) == 0;
  const mode_t old_mask = ::umask(static_cast<mode_t>(std::strtoul(f[2].c_str(), nullptr, 8) & 0777));
  env_.use({f.begin() + 4 + static_cast<long>(argc), f.end()});

  int code = output::exit_code::setup_failed;
  if (in_dir) {
    BusyAnswer busy(listen_fd_);
    ClientWatch watch(conn);
    const auto peer = peer_of(conn);
    // The client's terminal, when it has one: for passphrases and --live.
    const int terminal = m.fds.size() == 5 ? m.fds[4] : -1;
    code = run(argv, fanout::RunHost{&pool_, {&busy, &watch}, peer ? peer->pid : 0, terminal});
  } else {
    std::fprintf(stderr, "tpush: error: the persist master cannot enter your working directory; run again\n");
  }
  std::fflush(stdout);
  std::fflush(stderr);

  env_.use_own();
  ::umask(old_mask);
  if (::chdir("/") != 0) {
  }
  for (int i = 0; i < 3; ++i) {
    ::dup2(saved[i], i);
    ::close(saved[i]);
  }
  close_fds(m);  // the client's descriptors: its readers see EOF once it exits
  if (!send_message(conn, {"exit", std::to_string(code)})) return drain_signals();
  pollfd p{conn, POLLIN, 0};
  ::poll(&p, 1, kHangUpWaitMs);  // the client reads "exit" and hangs up
  drain_signals();
}

// Signals the client forwarded (Ctrl-C) that came after its run ended.
void Master::drain_signals() {
  if (util::drain_signals(signals_.fd()).terminate) done_ = true;
}

}  // namespace

int serve(const std::vector<std::string>& args, const RunCommandLine& run) {
  // args: SOCKET LOCK IDLE_SECONDS READY_FD
  if (args.size() != 4) {
    std::fprintf(stderr, "tpush: %s is tpush's own (a client starts it)\n", kMasterFlag);
    return output::exit_code::usage;
  }
  const int ready = std::atoi(args[3].c_str());
  Master master(args[0], args[1], std::chrono::seconds(std::max(1L, std::strtol(args[2].c_str(), nullptr, 10))));
  const bool serving = master.start();
  if (ready > 2) {
    // Either way a master is there to connect to (this one, or the lock's holder).
    if (::write(ready, "ok\n", 3) < 0) {
    }
    ::close(ready);
  }
  return serving ? master.serve(run) : 0;
}

}  // namespace tpush::persist
