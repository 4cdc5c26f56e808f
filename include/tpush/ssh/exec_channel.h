// A command on an authenticated session, as a non-blocking state machine:
//   open channel -> exec -> send EOF -> drain stdout/stderr -> close -> exit status
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "tpush/ssh/wait.h"

typedef struct _LIBSSH2_SESSION LIBSSH2_SESSION;
typedef struct _LIBSSH2_CHANNEL LIBSSH2_CHANNEL;

namespace tpush::ssh {

class ExecChannel {
 public:
  enum class Phase { open, exec, send_eof, stream, close, wait_closed, done, failed };

  struct Sink {
    // Receives stdout (stream 1) or stderr (stream 2) bytes.
    std::function<void(int stream, std::string_view bytes)> data;
    // False while the output cannot take more (backpressure): stop reading.
    std::function<bool()> can_accept;
  };

  ExecChannel(LIBSSH2_SESSION* session, std::string command);
  ~ExecChannel();
  ExecChannel(const ExecChannel&) = delete;
  ExecChannel& operator=(const ExecChannel&) = delete;

  void advance(const Sink& sink);
  Phase phase() const { return phase_; }
  Wait wait() const { return wait_; }
  bool paused() const { return paused_; }

  // Valid once done: the exit status, or the signal name ("KILL") when the
  // command was killed by one (libssh2 then reports status 0: check this first).
  int exit_status() const { return exit_status_; }
  const std::string& exit_signal() const { return exit_signal_; }
  const std::string& error() const { return error_; }
  bool server_hung_up() const { return hung_up_; }

  // Forgets the channel without touching the network: freeing the session
  // frees it. Used when the connection is abandoned.
  void release() { channel_ = nullptr; }

 private:
  bool would_block(int rc);
  void fail(const std::string& what, int rc);
  void stream(const Sink& sink);

  LIBSSH2_SESSION* session_;
  LIBSSH2_CHANNEL* channel_ = nullptr;
  std::string command_;
  Phase phase_ = Phase::open;
  Wait wait_ = Wait::none;
  bool paused_ = false;
  bool hung_up_ = false;
  int exit_status_ = -1;
  std::string exit_signal_;
  std::string error_;
};

}  // namespace tpush::ssh
