// What a job uses of a channel that runs a command (or the login shell) on a
// ready session: drive it, feed it stdin, take its output, signal it, read how
// it ended. The real one is ExecChannel (exec_channel.h); a job gets one from
// Session::open_channel, so a unit test's fake session hands it a fake.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "tpush/util/wait.h"

namespace tpush::ssh {

// Bytes for the command's stdin, shared by every worker (each keeps its offset).
class InputSource {
 public:
  virtual ~InputSource() = default;
  virtual std::string_view peek(std::uint64_t offset) const = 0;
  virtual bool at_end(std::uint64_t offset) const = 0;
};

class Channel {
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

  virtual ~Channel() = default;

  // Goes as far as it can without blocking; output goes to `sink`.
  virtual void advance(const Sink& sink) = 0;
  virtual Phase phase() const = 0;
  // Done or failed: nothing more will happen on the channel.
  bool ended() const { return phase() == Phase::done || phase() == Phase::failed; }
  virtual util::Wait wait() const = 0;
  // True while it stopped reading because the sink could take no more.
  virtual bool paused() const = 0;
  // How much of the input went out.
  virtual std::uint64_t input_offset() const = 0;

  // Ctrl-C for the remote command: ^C through the pty, else a "signal" request
  // (which OpenSSH's sshd refuses for root logins).
  virtual void interrupt_remote() = 0;
  // Sends a signal request ("TERM", "KILL"...) as soon as the channel allows.
  virtual void send_signal(std::string name) = 0;
  // The local terminal's new size, for the pty (a "window-change" request).
  virtual void resize(int columns, int rows) = 0;
  // True while a ^C, a signal or a size waits to be sent (the channel could not
  // take it yet): the next advance() sends it.
  virtual bool requests_pending() const = 0;

  // Valid once done: the exit status, or the signal name ("KILL") when the
  // command was killed by one (check that first: the status is then 0).
  virtual int exit_status() const = 0;
  virtual const std::string& exit_signal() const = 0;
  virtual const std::string& error() const = 0;
  // Failed because the connection was lost (the server hung up).
  virtual bool server_hung_up() const = 0;
  // True once the command was sent: before that, a failure asked the server
  // for nothing but a channel.
  virtual bool command_sent() const = 0;
  // With Settings::forward_agent, once exec'd: whether the server agreed, and
  // if not, why ("the server refused to forward the agent": AllowAgentForwarding
  // no, a restricted key, or a second request on one connection).
  virtual bool agent_forwarded() const = 0;
  virtual const std::string& agent_refusal() const = 0;

  // While held, stdin is not written (a packet half sent is finished first):
  // on a session whose socket this channel's stdin keeps full, another
  // channel's few bytes (a relay's orders, an agent's answer) would otherwise
  // wait until it is done, as libssh2 sends one packet at a time.
  virtual void hold_input(bool held) = 0;
  // With a gated stdin: `bytes` go out ahead of everything else, and are
  // wiped from memory once sent.
  virtual void write_first(std::string bytes) = 0;
  // With a gated stdin: the input (or EOF) follows now.
  virtual void open_gate() = 0;
  // EOF now, and none of the input ever: what reads stdin reads no more.
  virtual void end_input() = 0;

  // Forgets the channel without touching the network: freeing the session
  // frees it. Used when the connection is abandoned.
  virtual void release() = 0;
};

}  // namespace tpush::ssh
