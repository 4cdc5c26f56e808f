// A shell kept running on a session a persist master keeps (--persist), that
// runs the later commands of that session: a command then costs the worker one
// fork of that shell, where an exec channel costs sshd a fork, a session setup
// and the exec of a login shell, and tpush one round trip more.
//
// The shell is the user's login shell, bash, started once as an exec channel's
// command (after bash's own startup files, as for any command), with job
// control on, so each command runs as a job in a process group of its own,
// just as sshd starts each command in a session of its own. A command is sent
// at once, on the shell's stdin, as a header line (its line count, the group
// tag of ssh/remote_group.h, a tag with a nonce drawn for the command, and the
// name of its claim) and its lines. The shell claims it (a file it creates
// exclusively in the guardian's directory), runs it in a subshell with
// /dev/null as stdin, stdout and stderr being the channel's, registers its
// group with the connection's hang-up guardian, and after it writes a marker
// line (ssh/kept_shell_marker.h) on both streams: the exit status, "+" when
// processes the command started in its group still run (the shell then
// leaves, and the channel ends when they close its output, as an exec channel
// would), or "stale" when a file bash or sshd read at login changed since the
// shell started (the command did not run: the caller runs it on an exec
// channel, and the next run starts a new shell).
//
// The claim is what lets a command be sent without first asking whether the
// kept session still lives: when the session or the shell fails before the
// command answered, the caller runs it on another channel behind with_claim(),
// which runs it only if the kept shell never claimed it. So a command runs at
// most once, and a session that died while kept costs no more than before.
//
// Where the login shell is not bash, or the guardian's directory is not the
// user's, the shell leaves at once and commands keep using exec channels.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "tpush/ssh/channel.h"
#include "tpush/ssh/kept_shell_marker.h"
#include "tpush/ssh/session.h"

namespace tpush::ssh {

// The command that starts a kept shell: `hello_tag` begins the line it
// writes when ready.
std::string kept_shell_script(const std::string& hello_tag);

// `command` (an exec channel's) behind the claim at the path `claim`
// (KeptShell::claim_path()): the login shell exits with 255 before anything
// else runs when the claim file exists (the kept shell ran the command) or its
// directory does not (the kept session ended, and with it what it claimed).
std::string with_claim(const std::string& claim, const std::string& command);

class KeptShell {
 public:
  // Starts the shell on a channel of `session`, which must be ready.
  explicit KeptShell(Session& session);
  KeptShell(const KeptShell&) = delete;
  KeptShell& operator=(const KeptShell&) = delete;

  // How a command sent with run() ended.
  struct RunEnd {
    enum class Kind { exited, declined, failed } kind;
    int status = -1;     // exited: the exit status (128 + N for signal N, as bash reports it)
    std::string error;   // failed: what went wrong
    bool hung_up = false;

    static RunEnd exited(int status) { return {Kind::exited, status, {}, false}; }
    static RunEnd declined() { return {Kind::declined, -1, {}, false}; }
    static RunEnd failed(std::string error, bool hung_up = false) {
      return {Kind::failed, -1, std::move(error), hung_up};
    }
  };

  // Drives the channel. During a run the command's output goes to `sink`;
  // before the shell is ready, what bash's startup files print is dropped.
  void advance(const Channel::Sink& sink);

  // True while the channel is being opened: a session opens one channel at a
  // time (libssh2 keeps that state per session), so no other may start now.
  bool opening() const;
  bool ready() const { return state_ == State::ready; }
  // True while it may still become ready, or is: worth keeping with the session.
  bool alive() const { return state_ == State::starting || state_ == State::ready; }
  // True once the channel is closed or failed: nothing of it is left to drive.
  bool ended() const;
  // True when it ended without ever being ready (the login shell is not bash,
  // no guardian directory): the session runs its commands on exec channels.
  bool unavailable() const { return ended() && !was_ready_; }

  // Sends `command` (a ready shell only). `group_tag`: the start of the line
  // the command's subshell writes on stderr with its pid. False when the
  // command cannot go this way (it holds a NUL byte).
  bool run(std::string_view command, const std::string& group_tag);
  // True once some of the command's bytes went to the worker.
  bool command_sent() const { return channel_->input_offset() > sent_before_run_; }
  // True once anything of the command came back: it surely started (its
  // first act is to write its group's tag), or was declined.
  bool answered() const { return answered_; }
  // The claim file of the command sent last, for with_claim().
  std::string claim_path() const { return claims_ + "/c" + claim_; }
  // Set once the run ended: both markers came (and, after "+", the channel's end).
  const std::optional<RunEnd>& run_end() const { return end_; }

  bool paused() const { return channel_->paused(); }
  // Forgets the channel without touching the network (the session is abandoned).
  void release() { channel_->release(); }

 private:
  enum class State { starting, ready, running, draining, leaving, gone };

  // The shell's stdin: the commands sent so far.
  class Input final : public InputSource {
   public:
    std::string_view peek(std::uint64_t offset) const override;
    bool at_end(std::uint64_t offset) const override { return closed_ && offset == end(); }
    std::uint64_t end() const { return base_ + data_.size(); }
    void append(std::string_view bytes) { data_.append(bytes); }
    void close() { closed_ = true; }
    void drop_before(std::uint64_t offset);

   private:
    std::string data_;
    std::uint64_t base_ = 0;  // the offset of data_[0]
    bool closed_ = false;     // EOF once the rest is sent: the shell leaves
  };

  void take(int stream, std::string_view bytes, const Channel::Sink& sink);
  void markers_done(const Channel::Sink& sink);
  void channel_ended(const Channel::Sink& sink);
  void leave();

  Input input_;
  std::string hello_tag_;  // the start of the line the shell writes once it is ready
  std::unique_ptr<Channel> channel_;  // after input_, which it reads
  State state_ = State::starting;
  bool was_ready_ = false;
  KeptShellMarker hello_;
  std::optional<KeptShellMarker> out_marker_, err_marker_;
  std::uint64_t sent_before_run_ = std::numeric_limits<std::uint64_t>::max();
  bool answered_ = false;
  std::string claims_;  // the directory of the claims, as the shell said when ready
  std::string claim_;   // the claim of the command sent last
  int status_ = -1;
  std::optional<RunEnd> end_;
};

}  // namespace tpush::ssh
