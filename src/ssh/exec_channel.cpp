#include "tpush/ssh/exec_channel.h"

#include <libssh2.h>
#include <openssl/crypto.h>

#include "tpush/ssh/hangup.h"
#include "tpush/ssh/last_error.h"
#include "tpush/ssh/session_wait.h"

#include <array>
#include <cstdlib>
#include <cstring>

namespace tpush::ssh {
ExecChannel::ExecChannel(LIBSSH2_SESSION* session, std::string command, Settings settings)
    : session_(session), command_(std::move(command)), settings_(settings), gated_(settings.stdin_gated) {}

ExecChannel::~ExecChannel() { OPENSSL_cleanse(first_.data(), first_.size()); }

void ExecChannel::write_first(std::string bytes) {
  stdin_news_ = true;
  first_ += bytes;
  OPENSSL_cleanse(bytes.data(), bytes.size());
}

void ExecChannel::end_input() {
  OPENSSL_cleanse(first_.data(), first_.size());
  first_.clear();
  gated_ = false;
  input_refused_ = true;
  stdin_news_ = true;
}

// write_first()'s bytes: false while some are left (blocked), or the channel failed.
bool ExecChannel::feed_first() {
  while (!first_.empty()) {
    const ssize_t n = libssh2_channel_write(channel_, first_.data(), first_.size());
    if (n == LIBSSH2_ERROR_EAGAIN || n == 0) {
      write_blocked_ = true;
      packet_pending_ = n != 0 && (libssh2_session_block_directions(session_) & LIBSSH2_SESSION_BLOCK_OUTBOUND);
      return false;
    }
    packet_pending_ = false;
    if (n < 0) {
      end_input();
      if (n != LIBSSH2_ERROR_CHANNEL_CLOSED) fail("sending stdin failed", static_cast<int>(n));
      return false;
    }
    OPENSSL_cleanse(first_.data(), static_cast<std::size_t>(n));
    first_.erase(0, static_cast<std::size_t>(n));
  }
  return true;
}

bool ExecChannel::would_block(int rc) {
  if (rc != LIBSSH2_ERROR_EAGAIN) return false;
  wait_ = blocked_direction(session_);
  return true;
}

void ExecChannel::fail(const std::string& what, int rc) {
  hung_up_ = is_hangup(rc);
  if (rc == LIBSSH2_ERROR_SOCKET_DISCONNECT) {
    error_ = "the server closed the connection";
  } else if (rc == LIBSSH2_ERROR_SOCKET_RECV || rc == LIBSSH2_ERROR_SOCKET_SEND) {
    error_ = "the network connection failed";
  } else {
    const std::string message = last_error(session_);
    error_ = what + (message.empty() ? "" : ": " + message);
  }
  phase_ = Phase::failed;
  wait_ = util::Wait::none;
}

void ExecChannel::interrupt_remote() {
  if (settings_.pty) pending_ctrl_c_ = true;
  else pending_signal_ = "INT";
}

void ExecChannel::send_signal(std::string name) { pending_signal_ = std::move(name); }

void ExecChannel::resize(int columns, int rows) {
  if (!settings_.pty || (columns == settings_.columns && rows == settings_.rows)) return;
  settings_.columns = columns;
  settings_.rows = rows;
  pending_size_ = true;
}

void ExecChannel::flush_requests() {
  if (phase_ != Phase::stream || write_blocked_) return;
  if (pending_ctrl_c_) {
    const ssize_t n = libssh2_channel_write(channel_, "\x03", 1);
    if (n == LIBSSH2_ERROR_EAGAIN || n == 0) return;  // 0: no window yet
    pending_ctrl_c_ = false;
  }
  if (!pending_signal_.empty()) {
    const int rc = libssh2_channel_signal_ex(channel_, pending_signal_.data(), pending_signal_.size());
    if (rc == LIBSSH2_ERROR_EAGAIN) return;
    pending_signal_.clear();  // sent (or refused; sshd does not answer signal requests)
  }
  if (pending_size_) {
    const int rc = libssh2_channel_request_pty_size(channel_, settings_.columns, settings_.rows);
    if (rc == LIBSSH2_ERROR_EAGAIN) return;
    pending_size_ = false;  // sent (a window change has no answer)
  }
}

void ExecChannel::advance(const Sink& sink) {
  for (;;) {
    const Phase before = phase_;
    switch (phase_) {
      case Phase::open: open_channel(); break;
      case Phase::pty: request_pty(); break;
      case Phase::agent: request_agent(); break;
      case Phase::exec: start_command(); break;
      case Phase::stream: stream(sink); break;
      case Phase::close: close_ours(); break;
      case Phase::wait_closed: await_close(); break;
      case Phase::done:
      case Phase::failed: return;
    }
    if (phase_ == before) return;  // waits (or, streaming, has read what there was)
  }
}

void ExecChannel::open_channel() {
  channel_ = libssh2_channel_open_session(session_);
  if (!channel_) {
    const int rc = libssh2_session_last_errno(session_);
    if (!would_block(rc)) fail("cannot open a session channel", rc);
    return;
  }
  phase_ = settings_.pty ? Phase::pty : settings_.forward_agent ? Phase::agent : Phase::exec;
}

void ExecChannel::request_pty() {
  const char* term = std::getenv("TERM");
  if (!term || !*term) term = "xterm";
  const int rc = libssh2_channel_request_pty_ex(channel_, term, static_cast<unsigned>(std::strlen(term)), nullptr,
                                                0, settings_.columns > 0 ? settings_.columns : 80,
                                                settings_.rows > 0 ? settings_.rows : 24, 0, 0);
  if (would_block(rc)) return;
  if (rc != 0) return fail("the server refused a pseudo-terminal", rc);
  phase_ = settings_.forward_agent ? Phase::agent : Phase::exec;
}

// Before exec: sshd takes it only then, and once per connection.
void ExecChannel::request_agent() {
  const int rc = libssh2_channel_request_auth_agent(channel_);
  if (would_block(rc)) return;
  agent_forwarded_ = rc == 0;
  if (rc != 0 && !is_hangup(rc)) agent_refusal_ = "the server refused to forward the agent";
  else if (rc != 0) return fail("asking the server to forward the agent failed", rc);
  phase_ = Phase::exec;
}

void ExecChannel::start_command() {
  command_sent_ = true;
  const int rc = command_.empty() ? libssh2_channel_shell(channel_) : libssh2_channel_exec(channel_, command_.c_str());
  if (would_block(rc)) return;
  if (rc != 0)
    return fail(command_.empty() ? "the server refused to start a login shell" : "the server refused to run the command", rc);
  phase_ = Phase::stream;
}

// Our close, then the server's with the exit status before it. A watched
// stdin waits for the server's first: ours would close the command's stdin
// (the watch's news of a hang-up) while the command may still run, having
// closed its stdout and stderr before it exits (as coreutils do).
void ExecChannel::close_ours() {
  const int rc = libssh2_channel_close(channel_);
  if (would_block(rc)) return;
  if (rc != 0) return fail("closing the channel failed", rc);
  if (settings_.stdin_watched) return finish();  // the server's close came first
  phase_ = Phase::wait_closed;
}

void ExecChannel::await_close() {
  const int rc = libssh2_channel_wait_closed(channel_);
  if (would_block(rc)) return;
  if (rc != 0) return fail("waiting for the exit status failed", rc);
  exit_status_ = libssh2_channel_get_exit_status(channel_);
  char* sig = nullptr;
  std::size_t siglen = 0;
  libssh2_channel_get_exit_signal(channel_, &sig, &siglen, nullptr, nullptr, nullptr, nullptr);
  if (sig) {
    exit_signal_.assign(sig, siglen);
    libssh2_free(session_, sig);
  }
  if (settings_.stdin_watched) {  // ours follows it
    phase_ = Phase::close;
    return;
  }
  finish();
}

void ExecChannel::finish() {
  libssh2_channel_free(channel_);
  channel_ = nullptr;
  phase_ = Phase::done;
  wait_ = util::Wait::none;
}

// Writes what stdin has for this worker, then EOF once it is all sent.
//
// A write libssh2 answered EAGAIN left a packet half sent: until this channel
// writes again (libssh2 resends the rest), every other packet of the session,
// this channel's close or another channel's data, gets EAGAIN. So stream()
// finishes a pending packet before the channel closes.
bool ExecChannel::feed_input() {
  write_blocked_ = false;
  stdin_news_ = false;
  if (!feed_first()) return phase_ != Phase::failed;
  if (gated_) return true;
  const InputSource* in = settings_.input;
  while (in && !input_refused_) {
    // Held: only a packet already half sent is finished (libssh2 sends
    // nothing else on the session before it), so another channel's turn comes.
    if (input_held_ && !packet_pending_) return true;
    const std::string_view data = in->peek(input_offset_);
    if (data.empty()) break;
    const ssize_t n = libssh2_channel_write(channel_, data.data(), data.size());
    if (n == LIBSSH2_ERROR_EAGAIN) {
      // Blocked sending: the socket is full, with a packet half sent. Blocked
      // receiving: the channel's window is closed, and nothing is pending.
      write_blocked_ = true;
      packet_pending_ = libssh2_session_block_directions(session_) & LIBSSH2_SESSION_BLOCK_OUTBOUND;
      return true;
    }
    packet_pending_ = false;
    if (n == LIBSSH2_ERROR_CHANNEL_CLOSED || (n <= 0 && libssh2_channel_eof(channel_))) {
      // The command ended without reading all of it (as `head` does): its
      // exit status, on its way, says how that went.
      input_refused_ = eof_sent_ = true;
      return true;
    }
    // 0: the channel's window is closed (libssh2 says 0, not EAGAIN, when it
    // read what had come and found no window adjust): the command reads slowly.
    if (n == 0) {
      write_blocked_ = true;
      return true;
    }
    if (n < 0) {
      fail("sending stdin failed", static_cast<int>(n));
      return false;
    }
    input_offset_ += static_cast<std::uint64_t>(n);
  }
  // A pty keeps its input side open: EOF would end the channel's writes, and
  // with them the ^C that interrupt_remote() sends. A watched stdin is open
  // until the command ends: its EOF is the watch's news of a hang-up.
  const bool input_done =
      !settings_.pty && !settings_.stdin_watched && (!in || input_refused_ || in->at_end(input_offset_));
  if (input_done && !eof_sent_) {
    const int rc = libssh2_channel_send_eof(channel_);
    if (rc == LIBSSH2_ERROR_EAGAIN) {
      write_blocked_ = true;
      return true;
    }
    if (rc != 0 && is_hangup(rc)) {
      fail("sending EOF failed", rc);
      return false;
    }
    eof_sent_ = true;
  }
  return true;
}

// Reads stdout and stderr until both would block. libssh2 pulls every packet
// waiting on the socket into its own queue while reading either stream, so a
// pass that read something must be followed by another before we may sleep on
// the socket again. (The connection's per-turn receive budget makes libssh2
// report EAGAIN early, with the socket still readable: fairness between workers.)
void ExecChannel::stream(const Sink& sink) {
  static std::array<char, 64 * 1024> buf;
  if (!feed_input()) return;
  flush_requests();
  paused_ = false;
  bool progress = true;
  int ended = 0;  // streams that reported end of data in the last pass
  while (progress) {
    progress = false;
    ended = 0;
    for (int stream_id : {0, SSH_EXTENDED_DATA_STDERR}) {
      for (;;) {
        if (!sink.can_accept()) {
          paused_ = true;
          wait_ = util::Wait::none;
          return;
        }
        const ssize_t n = libssh2_channel_read_ex(channel_, stream_id, buf.data(), buf.size());
        if (n > 0) {
          sink.data(stream_id == 0 ? 1 : 2, std::string_view(buf.data(), static_cast<std::size_t>(n)));
          progress = true;
          continue;
        }
        if (n == 0) ++ended;
        if (n == LIBSSH2_ERROR_EAGAIN || n == 0) break;
        fail("reading output failed", static_cast<int>(n));
        return;
      }
    }
    // Reading may have opened the remote window, or what was read asked for
    // stdin (write_first, open_gate): send it.
    if (progress && (write_blocked_ || stdin_news_) && !feed_input()) return;
  }
  // Both streams at their end: EOF, or a close without EOF. A packet half
  // sent goes out first (see feed_input).
  if (ended == 2 || libssh2_channel_eof(channel_)) {
    if (packet_pending_ && !feed_input()) return;
    if (!packet_pending_) {
      phase_ = settings_.stdin_watched ? Phase::wait_closed : Phase::close;
      return;
    }
  }
  // A closed window opens with a packet to read: waiting to write would spin.
  const bool can_write = packet_pending_ || (write_blocked_ && libssh2_channel_window_write(channel_) > 0);
  wait_ = can_write ? util::Wait::read_write : util::Wait::read;
}

}  // namespace tpush::ssh
