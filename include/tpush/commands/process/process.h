// Processes on every worker: `kill PATTERN`, `kill --tpu`, `ps [PATTERN]`,
// `logs FILE`, and the wrapper behind `--detach --log FILE`.
//
// The *_script builders are pure: each returns the command line a worker's login
// shell runs (POSIX sh, works under dash and bash), with every argument quoted.
// The helpers run as `sh -c SCRIPT __tpush_helper__ ARGS...`; the marker in their
// command line is how they skip themselves, each other (other workers sharing one
// machine, another tpush) and their own children (pgrep, tr, sleep) when matching.
#pragma once

#include <optional>
#include <string>

#include "tpush/commands/cli/options.h"
#include "tpush/ssh/remote_group.h"

namespace tpush::commands {

int kill_main(Options& o, int signal_fd);
int ps_main(Options& o, int signal_fd);
int logs_main(Options& o, int signal_fd);

// Appears in every helper's command line; processes carrying it are never matched.
using ssh::helper_marker;

// "TERM", "SIGTERM", "term", "15" -> "TERM"; nullopt for a signal tpush does not know.
std::optional<std::string> signal_name(const std::string& sig);

// Empty when `pattern` is a valid POSIX extended regex (what pgrep -f takes), else why not.
std::string pattern_error(const std::string& pattern);

struct KillSpec {
  std::string signal = "TERM";  // a name from signal_name()
  double grace = 5;             // seconds between the signal and KILL
  bool all_users = false;       // every user's processes (kill --sudo, which runs it as root)
  // local_client() of the tpush sending the script: on a worker that is this very
  // machine (-w localhost), that process and its ancestors are never matched.
  std::string client;
};

// "BOOT_ID PID START" for the tpush the user started (empty if /proc cannot
// tell): this process, or when a persist master runs the command, its client.
// A worker compares it with its own boot id and /proc/PID/stat to know it is us.
std::string local_client(const Options& o);

// `kill PATTERN`: every process of the remote user (every process with sudo) whose
// full command line matches the ERE `pattern` gets `spec.signal` (report line
// `killed PID COMMAND`); what is left after the grace gets KILL (`KILLed PID COMMAND`);
// anything still alive after that is `survived PID COMMAND` and the exit status is 1.
// No match prints `nothing matched` and exits 0. Signals that do not end a process
// (USR1, CONT, STOP, ...) are sent once: `sent SIG PID COMMAND`, no wait, no KILL.
std::string kill_script(const std::string& pattern, const KillSpec& spec);

struct TpuKillSpec {
  KillSpec kill;
  // Whitespace-separated globs and paths; nullopt = the worker's TPUSH_TPU_DEVICES /
  // TPUSH_TPU_LOCKFILES if set there, else /dev/accel* /dev/vfio/* and
  // /tmp/libtpu_lockfile /tmp/tpu_logs. (A hook for tests and other accelerators.)
  std::optional<std::string> devices, lockfiles;
};

// `kill --tpu`: stops every process holding one of the devices (lsof, else fuser,
// else /proc/*/fd), waits until the devices are free, then removes the lock files
// (`removed PATH`). Devices still held: `still held PID COMMAND`, the lock files
// stay, exit status 1.
std::string tpu_kill_script(const TpuKillSpec& spec);

// `ps [PATTERN]`: `PID ELAPSED COMMAND` for the remote user's processes (every
// user's with all_users) that match, or with no pattern all of them except the login
// plumbing (sshd, systemd --user, (sd-pam)); tpush's own helpers never appear.
std::string ps_script(const std::optional<std::string>& pattern, bool all_users);

// `logs FILE`: tail -n LINES; with follow, tail -F that ends when the SSH session
// that started it ends (tail --pid on the sshd session process, else a watchdog).
// `lines` is a count or +N (from line N). "~/..." is relative to the remote $HOME.
std::string logs_command(const std::string& file, const std::string& lines, bool follow);

// `--detach --log FILE`: starts `command` under the remote login shell ($SHELL -c) in
// a session of its own (setsid, nohup), stdin from /dev/null, stdout and stderr
// appended to FILE, prints `started pid N` and returns at once. N is the job's
// session leader: `kill -- -N` stops the whole job.
std::string detach_command(const std::string& command, const std::string& log_file);

}  // namespace tpush::commands
