// A command on an authenticated session, as a non-blocking state machine:
//   open channel -> [pty] -> [agent] -> exec (or shell) -> stream (stdin in, stdout/stderr out, EOF)
//   -> close -> exit status (with a watched stdin: exit status -> close)
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "tpush/util/wait.h"

typedef struct _LIBSSH2_SESSION LIBSSH2_SESSION;
typedef struct _LIBSSH2_CHANNEL LIBSSH2_CHANNEL;

namespace tpush::ssh {

// Bytes for the command's stdin, shared by every worker (each keeps its offset).
class InputSource {
 public:
  virtual ~InputSource() = default;
  virtual std::string_view peek(std::uint64_t offset) const = 0;
  virtual bool at_end(std::uint64_t offset) const = 0;
};

class ExecChannel {
 public:
  enum class Phase { open, pty, agent, exec, stream, close, wait_closed, done, failed };

  struct Sink {
    // Receives stdout (stream 1) or stderr (stream 2) bytes.
    std::function<void(int stream, std::string_view bytes)> data;
    // False while the output cannot take more (backpressure): stop reading.
    std::function<bool()> can_accept;
  };

  struct Settings {
    bool pty = false;                    // request a pseudo-terminal (stderr merges into stdout)
    const InputSource* input = nullptr;  // null: the command gets EOF at once, like ssh -n
    // Ask the server to forward an agent to the command (auth-agent-req): the
    // agent channels it opens arrive on the session (Session::take_agent_channels).
    bool forward_agent = false;
    // No input and no EOF either: the channel's stdin stays open until the
    // command ends, for the hang-up watch that reads it (HangUpWatch::stdin);
    // the prologue gives the command /dev/null, so it still reads EOF at once.
    bool stdin_watched = false;
    // Stdin gated: nothing of the input, nor EOF, goes out until open_gate();
    // only what write_first() is given (sudo's password, once it asked).
    bool stdin_gated = false;
    // The pty's size in characters (0: 80 x 24).
    int columns = 0;
    int rows = 0;
  };

  // An empty `command` asks for the login shell (a "shell" request, as
  // `ssh HOST` does) instead of running a command.
  ExecChannel(LIBSSH2_SESSION* session, std::string command, Settings settings);
  ~ExecChannel();
  ExecChannel(const ExecChannel&) = delete;
  ExecChannel& operator=(const ExecChannel&) = delete;

  void advance(const Sink& sink);
  Phase phase() const { return phase_; }
  // Done or failed: nothing more will happen on the channel.
  bool ended() const { return phase_ == Phase::done || phase_ == Phase::failed; }
  util::Wait wait() const { return wait_; }
  bool paused() const { return paused_; }
  std::uint64_t input_offset() const { return input_offset_; }

  // Ctrl-C for the remote command: ^C through the pty, else a "signal" request
  // (which OpenSSH's sshd refuses for root logins).
  void interrupt_remote();
  // Sends a signal request ("TERM", "KILL"...) as soon as the channel allows.
  void send_signal(std::string name);
  // The local terminal's new size, for the pty (a "window-change" request).
  void resize(int columns, int rows);
  // True while a ^C, a signal or a size waits to be sent (the channel could not
  // take it yet): the next advance() sends it.
  bool requests_pending() const { return pending_ctrl_c_ || !pending_signal_.empty() || pending_size_; }

  // Valid once done: the exit status, or the signal name ("KILL") when the
  // command was killed by one (libssh2 then reports status 0: check this first).
  int exit_status() const { return exit_status_; }
  const std::string& exit_signal() const { return exit_signal_; }
  const std::string& error() const { return error_; }
  bool server_hung_up() const { return hung_up_; }
  // True once the command was sent: before that, a failure asked the server
  // for nothing but a channel.
  bool command_sent() const { return command_sent_; }
  // With Settings::forward_agent, once exec'd: whether the server agreed, and
  // if not, why ("the server refused to forward the agent": AllowAgentForwarding
  // no, a restricted key, or a second request on one connection).
  bool agent_forwarded() const { return agent_forwarded_; }
  const std::string& agent_refusal() const { return agent_refusal_; }

  // While held, stdin is not written (a packet half sent is finished first):
  // on a session whose socket this channel's stdin keeps full, another
  // channel's few bytes (a relay's orders, an agent's answer) would otherwise
  // wait until it is done, as libssh2 sends one packet at a time.
  void hold_input(bool held) { input_held_ = held; }

  // With a gated stdin: `bytes` go out ahead of everything else, and are
  // wiped from memory once sent.
  void write_first(std::string bytes);
  // With a gated stdin: the input (or EOF) follows now.
  void open_gate() {
    stdin_news_ = stdin_news_ || gated_;
    gated_ = false;
  }
  // EOF now, and none of the input ever: what reads stdin reads no more.
  void end_input();

  // Forgets the channel without touching the network: freeing the session
  // frees it. Used when the connection is abandoned.
  void release() { channel_ = nullptr; }

 private:
  bool would_block(int rc);
  void fail(const std::string& what, int rc);
  // The steps of advance(), one per phase: each moves phase_ on, or leaves
  // it where it is while libssh2 waits.
  void open_channel();
  void request_pty();
  void request_agent();
  void start_command();
  void stream(const Sink& sink);
  void close_ours();
  void await_close();
  bool feed_first();
  bool feed_input();      // false when the channel failed
  void flush_requests();  // pending ^C / signal
  void finish();          // both closes done: the channel is freed

  LIBSSH2_SESSION* session_;
  LIBSSH2_CHANNEL* channel_ = nullptr;
  std::string command_;
  Settings settings_;
  Phase phase_ = Phase::open;
  util::Wait wait_ = util::Wait::none;
  bool paused_ = false;
  bool hung_up_ = false;
  bool command_sent_ = false;
  bool agent_forwarded_ = false;
  std::string agent_refusal_;
  bool eof_sent_ = false;
  bool input_refused_ = false;  // the remote side closed: no more stdin
  bool packet_pending_ = false;  // a stdin write half sent (see feed_input)
  bool input_held_ = false;
  bool gated_ = false;      // Settings::stdin_gated, until open_gate()
  std::string first_;       // write_first()'s bytes not yet sent
  bool stdin_news_ = false;  // write_first(), open_gate() or end_input() since the last feed_input()
  bool write_blocked_ = false;
  std::uint64_t input_offset_ = 0;
  bool pending_ctrl_c_ = false;
  std::string pending_signal_;
  bool pending_size_ = false;  // settings_.columns and rows, not yet sent
  int exit_status_ = -1;
  std::string exit_signal_;
  std::string error_;
};

}  // namespace tpush::ssh
