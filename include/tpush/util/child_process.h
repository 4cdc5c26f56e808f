// Every child process tpush starts (gcloud, rsync, a ProxyCommand) is started
// here, the same way: an argument vector (never a shell unless asked for), in
// a process group of its own (Ctrl-C on the terminal reaches it only through
// tpush), with the signal mask and dispositions tpush changed (util/signals.h)
// back at their defaults, and stdin/stdout/stderr given as descriptors or
// /dev/null. A child is reaped through its object; nothing here ever blocks
// the event loop except the explicit run_captured().
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace tpush::util {

// Descriptor choices for a child's standard streams.
inline constexpr int kDevNull = -1;  // /dev/null
inline constexpr int kInherit = -2;  // tpush's own

struct ChildSpec {
  std::filesystem::path program;   // absolute, or a name looked up on PATH
  std::vector<std::string> args;   // argv[1..]
  int stdin_fd = kDevNull;
  int stdout_fd = kDevNull;
  int stderr_fd = kDevNull;
  std::vector<std::string> env;    // NAME=VALUE set (or replaced) in the child's environment
  // False: the child stays in tpush's process group, so the terminal's Ctrl-C
  // reaches it as it reaches tpush (a local command run from the prompt).
  bool own_group = true;
};

// `name` as found on PATH (or itself when it holds a '/'); empty when absent.
std::filesystem::path find_program(const std::string& name);

class Child {
 public:
  using Clock = std::chrono::steady_clock;

  // Starts the child. Throws SetupError naming the program and the fix when it
  // cannot be found or started.
  static Child spawn(const ChildSpec& spec);

  Child() = default;
  Child(Child&& other) noexcept;
  Child& operator=(Child&& other) noexcept;
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  // A child still running is killed (its whole group) and reaped.
  ~Child();

  pid_t pid() const { return pid_; }
  bool running() const { return pid_ > 0 && !status_; }
  // Reaps the child if it has exited; true once it has. Never blocks.
  bool poll();
  // The wait status (as from waitpid) once reaped.
  std::optional<int> status() const { return status_; }

  // Sends `signo` to the child's process group (to the child alone when it
  // shares tpush's).
  void signal_group(int signo) const;
  // Stopping in two steps without blocking: TERM to the group now, KILL once
  // `grace` has passed at a later call of tick(). tick() also reaps.
  void stop(Clock::time_point now, std::chrono::milliseconds grace);
  void tick(Clock::time_point now);
  // Blocks until the child exits and returns its status (a stopped child gets KILL first).
  int wait();

 private:
  Child(pid_t pid, bool own_group) : pid_(pid), own_group_(own_group) {}
  void release();

  pid_t pid_ = -1;
  bool own_group_ = true;
  std::optional<int> status_;
  std::optional<Clock::time_point> kill_at_;
};

// Runs a child to completion with its stdout and stderr captured, for at most
// `timeout`. When `interrupt_fd` (watched, never read) becomes readable, the
// child's group is killed and `interrupted` is set. On timeout the group is
// killed too.
struct CapturedRun {
  std::optional<int> exit_code;  // nullopt: killed by a signal, timed out or interrupted
  bool timed_out = false;
  bool interrupted = false;
  std::string out, err;
};
CapturedRun run_captured(ChildSpec spec, std::chrono::milliseconds timeout, int interrupt_fd = -1);

// "exit 3" or "killed by SIGTERM" for a wait status.
std::string describe_wait_status(int status);

}  // namespace tpush::util
