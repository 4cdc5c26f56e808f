// A command on an authenticated session, as a non-blocking state machine:
//   open channel -> [pty] -> [agent] -> exec (or shell) -> stream (stdin in, stdout/stderr out, EOF)
//   -> close -> exit status (with a watched stdin: exit status -> close)
#pragma once

#include <cstdint>
#include <string>

#include "tpush/ssh/channel.h"

typedef struct _LIBSSH2_SESSION LIBSSH2_SESSION;
typedef struct _LIBSSH2_CHANNEL LIBSSH2_CHANNEL;

namespace tpush::ssh {

class ExecChannel final : public Channel {
 public:
  // An empty `command` asks for the login shell (a "shell" request, as
  // `ssh HOST` does) instead of running a command.
  ExecChannel(LIBSSH2_SESSION* session, std::string command, Settings settings);
  ~ExecChannel() override;
  ExecChannel(const ExecChannel&) = delete;
  ExecChannel& operator=(const ExecChannel&) = delete;

  void advance(const Sink& sink) override;
  Phase phase() const override { return phase_; }
  util::Wait wait() const override { return wait_; }
  bool paused() const override { return paused_; }
  std::uint64_t input_offset() const override { return input_offset_; }
  void interrupt_remote() override;
  void send_signal(std::string name) override;
  void resize(int columns, int rows) override;
  bool requests_pending() const override { return pending_ctrl_c_ || !pending_signal_.empty() || pending_size_; }
  // libssh2 reports status 0 for a command killed by a signal: exit_signal() says so.
  int exit_status() const override { return exit_status_; }
  const std::string& exit_signal() const override { return exit_signal_; }
  const std::string& error() const override { return error_; }
  bool server_hung_up() const override { return hung_up_; }
  bool command_sent() const override { return command_sent_; }
  bool agent_forwarded() const override { return agent_forwarded_; }
  const std::string& agent_refusal() const override { return agent_refusal_; }
  void hold_input(bool held) override { input_held_ = held; }
  void write_first(std::string bytes) override;
  void open_gate() override {
    stdin_news_ = stdin_news_ || gated_;
    gated_ = false;
  }
  void end_input() override;
  void release() override { channel_ = nullptr; }

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
