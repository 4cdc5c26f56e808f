// The remote command's process group, for stopping it whoever logs in.
//
// sshd starts every command in a session of its own (setsid), so the login
// shell's pid is the process group of everything the command starts. sshd
// refuses "signal" requests for root logins, and without a pty nothing on the
// remote side notices tpush hanging up. So a command without a pty runs behind
// a short prologue, in the login shell itself:
//   - it arranges for HUP to reach the group if the connection ends while the
//     command still runs, as a pty's hang-up does (HangUpWatch below), with
//     INT and TERM ignored while it forks. The watch never outlives the
//     command, and carries the helper marker, so `tpush kill`/`ps` never list
//     it;
//   - it prints a tag line with the shell's pid on stderr (GroupReport strips it
//     and keeps the pid), so an interrupt can be sent as `kill -s SIG -- -PGID`
//     over a second channel of the same session.
// A login shell that is not POSIX still runs the command: the tag never comes
// (interrupts fall back to signal requests).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tpush::ssh {

// In the command line of every helper process tpush starts on a worker (the
// watchdog here, the kill/ps scripts): processes carrying it are never matched.
inline constexpr const char* helper_marker = "__tpush_helper__";

// The start of the tag line: "tpush:pgid:" and a nonce drawn once per tpush
// process, so no command's output is taken for it. The pid and "\n" follow.
const std::string& group_tag();

// 16 hex digits from the system's random source: the nonce of a tag (this
// one, a kept shell's) that no command's output holds by chance.
std::string nonce();

// Who notices a connection lost mid-command:
//   - stdin: a subshell of the login shell reads the channel's stdin until sshd
//     closes it (remote_group_stdin_watch.sh): no new program at all. Only for
//     a channel that sends no input and no EOF (ExecChannel::Settings::
//     stdin_watched);
//   - per_command: a watchdog of the command's own, `sh` and two `tail --pid`
//     (remote_group_watchdog.sh), for a command that reads tpush's input (its
//     stdin is not free to watch). Without GNU tail it ends at once, unarmed;
//   - per_connection: one guardian per connection, for sessions kept between
//     runs (--persist), where later commands then start no helper at all.
enum class HangUpWatch { stdin, per_command, per_connection };

// `command` behind the prologue; the result is what the login shell runs.
std::string with_group_report(const std::string& command, HangUpWatch watch);

// Shell code that sets $tpush_d to the directory of the connection's hang-up
// guardian, starting the guardian when none runs yet; when the directory is not
// the user's, it sets $tpush_d empty and runs `otherwise` (shell code ending in
// ";" or "&"). Commands register there to be sent HUP when the connection ends.
std::string guardian_start(const std::string& otherwise);

// The command for a second channel that sends `signal` ("INT", "TERM") to the group.
std::string group_signal_command(long pgid, const std::string& signal);

// Takes the command's stderr as it arrives and passes it on without the tag line,
// which is looked for only among the first lines (what the login shell may print
// before running the prologue: a setlocale warning, say).
class GroupReport {
 public:
  // The bytes of `chunk` that are the command's own, in order. Bytes that could
  // still be the start of the tag are held back until they show what they are.
  std::string filter(std::string_view chunk);
  // What is held back, once the stream ended.
  std::string flush();
  std::optional<long> pgid() const { return pgid_; }
  // True once the tag was found or can no longer come.
  bool settled() const { return done_; }

 private:
  void take_line(std::string_view line, std::string& out);

  std::string held_;       // the start of a line that may be the tag
  bool in_line_ = false;   // passing through the rest of a line that is not the tag
  std::size_t lines_ = 0;  // complete lines seen while looking
  bool done_ = false;
  std::optional<long> pgid_;
};

}  // namespace tpush::ssh
