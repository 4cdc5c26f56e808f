#include "tpush/persist/client.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <spdlog/spdlog.h>

#include "tpush/output/exit_codes.h"
#include "tpush/persist/master.h"
#include "tpush/persist/messages.h"
#include "tpush/persist/place.h"
#include "tpush/util/signals.h"

extern char** environ;

namespace tpush::persist {
namespace {

// How long a client waits for a master's "hello" before it runs directly
// (the master is busy outside its event loop: resolving a TPU, say).
constexpr int kHelloWaitMs = 2000;
// How long a master it started may take to listen.
constexpr int kStartWaitMs = 5000;

int connect_to(const std::filesystem::path& socket) {
  const int s = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (s < 0) return -1;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, socket.c_str(), sizeof(addr.sun_path) - 1);
  if (::connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(s);
    return -1;
  }
  const auto peer = peer_of(s);
  if (!peer || peer->uid != ::getuid()) {  // not ours: never hand it our descriptors
    spdlog::warn("{} is served by uid {}, not by you; running directly", socket.string(), peer ? peer->uid : -1);
    ::close(s);
    return -1;
  }
  return s;
}

// Where the master at `place` writes what it has to say (its stderr).
std::filesystem::path log_of(const Place& place) {
  return place.socket.parent_path() / (place.socket.stem().string() + ".log");
}

// Starts a master in its own session, detached from our terminal and our
// children, and waits until it listens. False when it did not come up.
bool start_master(const Place& place, std::chrono::seconds persist) {
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) return false;
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(ready[0]);
    ::close(ready[1]);
    return false;
  }
  if (pid == 0) {
    ::setsid();
    if (::fork() != 0) ::_exit(0);  // the master is nobody's child but init's
    const int null = ::open("/dev/null", O_RDWR);
    const std::string log = log_of(place).string();
    const int err = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ::dup2(null, 0);
    ::dup2(null, 1);
    ::dup2(err >= 0 ? err : null, 2);
    ::fcntl(ready[1], F_SETFD, 0);
    util::restore_default_signals();
    if (::chdir("/") != 0) ::_exit(127);
    const std::string idle = std::to_string(persist.count()), fd = std::to_string(ready[1]);
    ::execl("/proc/self/exe", "tpush", kMasterFlag, place.socket.c_str(), place.lock.c_str(), idle.c_str(),
            fd.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(ready[1]);
  ::waitpid(pid, nullptr, 0);
  pollfd p{ready[0], POLLIN, 0};
  char buf[4] = {};
  const bool ok = ::poll(&p, 1, kStartWaitMs) == 1 && ::read(ready[0], buf, 3) == 3 && std::string(buf) == "ok\n";
  ::close(ready[0]);
  return ok;
}

// The master's first word: "hello" (send the run) or "busy".
std::optional<std::string> greeting(int s) {
  pollfd p{s, POLLIN, 0};
  if (::poll(&p, 1, kHelloWaitMs) != 1) return std::nullopt;
  auto m = receive_message(s);
  if (!m || m->fields.empty()) return std::nullopt;
  close_fds(*m);
  return m->fields[0];
}

struct Reached {
  int socket = -1;
  Place place;
};

// A master of the worker set that takes this run: the first one there that is
// free, else a new one in the first slot that has none (a busy master answers
// "busy"; one that does not answer in time counts as busy). Nullopt when every
// slot's master is busy, or none could be started.
std::optional<Reached> free_master(const RunRequest& r, const Place& first) {
  bool had_master[kMasterSlots] = {};
  for (const bool start : {false, true}) {
    for (int slot = 0; slot < kMasterSlots; ++slot) {
      if (start && had_master[slot]) continue;  // asked in the first pass
      Place place = first.slot(slot);
      if (!place.problem.empty()) continue;
      int s = connect_to(place.socket);
      had_master[slot] = s >= 0;
      if (s < 0 && start) {
        if (!start_master(place, r.persist)) {
          spdlog::debug("persist: no master came up for {}; running directly", place.socket.string());
          return std::nullopt;
        }
        if (!r.notice.empty()) std::fprintf(stderr, "tpush: %s\n", r.notice.c_str());
        s = connect_to(place.socket);
      }
      if (s < 0) continue;
      const auto word = greeting(s);
      if (word == "hello") return Reached{s, std::move(place)};
      spdlog::debug("persist: the master at {} is {}", place.socket.string(), word ? *word : "not answering");
      ::close(s);
    }
  }
  spdlog::debug("persist: all {} masters for these workers are busy; running directly", kMasterSlots);
  return std::nullopt;
}

std::vector<std::string> run_message(const RunRequest& r) {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  char octal[8];
  std::snprintf(octal, sizeof octal, "%03o", static_cast<unsigned>(mask));
  std::vector<std::string> fields{"run", std::to_string(r.persist.count()), octal, std::to_string(r.argv.size())};
  fields.insert(fields.end(), r.argv.begin(), r.argv.end());
  for (char** e = environ; e && *e; ++e) fields.emplace_back(*e);
  return fields;
}

// Passes signals on and waits for the run's exit code; nullopt when the master
// ended first. Ctrl-Z pauses the master's run while this client is stopped, as
// a direct run stops with tpush.
std::optional<int> await_exit(int s, pid_t master, int signal_fd) {
  util::JobControlScope job_control;
  for (;;) {
    pollfd fds[3] = {{s, POLLIN, 0}, {signal_fd, POLLIN, 0}, {job_control.fd(), POLLIN, 0}};
    if (::poll(fds, 3, -1) < 0) {
      if (errno == EINTR) continue;
      return std::nullopt;
    }
    signalfd_siginfo info{};
    if (fds[1].revents & POLLIN)
      while (::read(signal_fd, &info, sizeof info) == sizeof info) ::kill(master, static_cast<int>(info.ssi_signo));
    if (fds[2].revents & POLLIN)
      while (::read(job_control.fd(), &info, sizeof info) == sizeof info) {
        if (info.ssi_signo == SIGCONT) {
          send_message(s, {"cont"});
        } else if (send_message(s, {"stop"})) {
          ::raise(SIGSTOP);  // here until fg or bg continues us
        }
      }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      auto m = receive_message(s);
      if (!m) return std::nullopt;
      close_fds(*m);
      if (m->fields.size() == 2 && m->fields[0] == "exit") return std::atoi(m->fields[1].c_str());
    }
  }
}

bool standard_fds_open() {
  for (int fd = 0; fd < 3; ++fd)
    if (::fcntl(fd, F_GETFD) == -1) return false;
  return true;
}

}  // namespace

std::optional<int> run_through_master(const RunRequest& request, int signal_fd) {
  if (!standard_fds_open()) return std::nullopt;  // nothing to pass for a closed one
  const Place first = place_for(request.worker_set);
  if (!first.problem.empty()) {
    // Said when the user asked for --persist; the default only notes it in -v.
    if (request.notice.empty()) spdlog::warn("--persist: {}; running directly", first.problem);
    else spdlog::debug("persist: {}; running directly", first.problem);
    return std::nullopt;
  }
  const auto master = free_master(request, first);
  if (!master) return std::nullopt;
  const int s = master->socket;
  const auto peer = peer_of(s);
  if (!peer) {
    ::close(s);
    return std::nullopt;
  }
  const int cwd = ::open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  const int tty = ::open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);  // for passphrase prompts
  std::vector<int> fds{cwd, 0, 1, 2};
  if (tty >= 0) fds.push_back(tty);
  termios mode{};
  const bool terminal = ::tcgetattr(STDIN_FILENO, &mode) == 0;
  const bool sent = cwd >= 0 && send_message(s, run_message(request), fds);
  if (cwd >= 0) ::close(cwd);
  if (tty >= 0) ::close(tty);
  if (!sent) {
    spdlog::debug("persist: cannot hand the run to the master ({}); running directly", std::strerror(errno));
    ::close(s);
    return std::nullopt;
  }
  const auto code = await_exit(s, peer->pid, signal_fd);
  ::close(s);
  if (code) return code;
  if (terminal) ::tcsetattr(STDIN_FILENO, TCSANOW, &mode);
  std::fprintf(stderr,
               "tpush: error: the persist master (pid %ld) ended during the run: what the workers did is unknown "
               "(see %s; run again to connect directly)\n",
               static_cast<long>(peer->pid), log_of(master->place).c_str());
  return output::exit_code::unreachable;  // its workers' end is unknown, as a lost worker's
}

Disconnected disconnect(const std::string& worker_set) {
  Disconnected d;
  const Place first = place_for(worker_set);
  if (!first.problem.empty()) {
    d.problem = first.problem;
    return d;
  }
  for (int slot = 0; slot < kMasterSlots; ++slot) {
    const Place place = first.slot(slot);
    const int s = place.problem.empty() ? connect_to(place.socket) : -1;
    if (s < 0) continue;
    const auto peer = peer_of(s);
    const long pid = peer ? peer->pid : 0;
    if (greeting(s) == "hello" && send_message(s, {"disconnect"})) {
      pollfd p{s, POLLIN, 0};
      if (::poll(&p, 1, kHelloWaitMs) == 1)
        if (auto m = receive_message(s); m && m->fields.size() >= 2 && m->fields[0] == "held")
          d.ended.push_back({std::atol(m->fields[1].c_str()), {m->fields.begin() + 2, m->fields.end()}});
    } else {
      d.busy.push_back(pid);
    }
    ::close(s);
  }
  return d;
}

}  // namespace tpush::persist
