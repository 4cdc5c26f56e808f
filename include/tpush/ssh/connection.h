// One worker's SSH connection as an explicit non-blocking state machine:
//   resolve -> TCP connect -> handshake -> host key -> auth -> ready
// Every call to advance() goes as far as it can without blocking, then says
// which direction it waits on. Failures are values (phase failed + reason):
// the worker could not be reached, verified or logged in to.
#pragma once

#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tpush/ssh/identity/login.h"
#include "tpush/ssh/session.h"

namespace tpush::util {
class ChildReaper;
}

namespace tpush::ssh {

class NameLookup;

class Connection final : public Session {
 public:
  Connection(Endpoint endpoint, const ConnectionSettings& settings);
  ~Connection() override;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  Phase advance() override;
  Phase phase() const override { return phase_; }
  bool reached() const override { return reached_; }
  bool greeted() const override { return greeted_; }
  std::string path_failure() const override { return transport_ ? transport_->failure() : std::string(); }
  int fd() const override;
  util::Wait wait() const override;

  LIBSSH2_SESSION* session() const override { return session_; }
  std::unique_ptr<Channel> open_channel(std::string command, Channel::Settings settings) override;
  bool sending() const override;
  std::string host_key() const override;
  std::unique_ptr<DirectChannel> open_direct(const std::string& host, std::uint16_t port, int* rc) override {
    return open_direct_channel(session_, host, port, rc);
  }
  const std::string& failure_reason() const override { return failure_reason_; }
  const std::string& warning() const override { return warning_; }

  // Time in which tpush itself did not run (stopped with Ctrl-Z, a suspended
  // laptop, a starved machine: a gap of a second or more between ticks) is not
  // the peer's: what it sent meanwhile waits in our socket, unread. The layer
  // above calls this first on every tick; heard_from() and stalled() follow.
  void note_tick(Clock::time_point now) override;
  // When the peer was last heard from, for the "no response for N s" rules:
  // after a stall, no earlier than its end.
  Clock::time_point heard_from() const override {
    return resumed_ ? std::max(last_receive_, *resumed_) : last_receive_;
  }
  Clock::duration stalled() const override { return stalled_; }
  Clock::duration waited() const override { return transport_ ? transport_->waited() : Clock::duration{}; }
  bool waiting_turn() const override { return transport_ && transport_->waiting_turn(); }
  // Caps what one turn of the event loop may read from this socket; the
  // layer above resets it before each turn.
  void new_turn() override {
    recv_budget_ = turn_bytes;
    recv_calls_left_ = turn_calls;
    recv_dry_ = false;
  }
  static constexpr std::size_t turn_bytes = 512u << 10;
  static constexpr int turn_calls = 64;
  // Called about every 100 ms. Once ready: sends a keepalive when one is due
  // and nothing else is being written; after the first seconds, hands the
  // pages of the session libssh2 never wrote back (see session_memory.h), so
  // a thousand long-running commands cost ~25 KB each, not 80 KB. Short
  // sessions skip that: re-touching those pages costs page faults.
  void tick(Clock::time_point now) override;
  static constexpr std::chrono::seconds trim_after{2};
  // A best-effort disconnect message, then the socket is shut down and
  // everything freed. Never blocks.
  void abandon() override;

  // Forgets the run's keys and host-key policy.
  void park(util::ChildReaper* reaper) override;
  // Same user, host and port: the run's settings apply from now on.
  bool resume(Endpoint endpoint, const ConnectionSettings& settings) override;
  // An idle kept session is not read until it is used.
  bool peer_closed() const override;
  const Endpoint& endpoint() const { return endpoint_; }

  // Marks the connection failed with `reason` (used by the layer above for its own errors).
  void fail(std::string reason);
  std::string last_error() const override;

  LoginIdentity login_identity() const override { return login_; }
  std::vector<LIBSSH2_CHANNEL*> take_agent_channels() override;

  static long recv_callback(int fd, void* buf, std::size_t len, int flags, void** abstract);
  static void agent_callback(LIBSSH2_SESSION* session, LIBSSH2_CHANNEL* channel, void** abstract);

 private:
  // The steps of advance(): each returns true when it moved the connection
  // on to another phase (failed included), so advance() takes the next step
  // at once; false when it waits (wait_ says on what) or has nothing to do.
  bool resolve();
  bool open_transport();
  // What start_connect() did.
  enum class Attempt { connecting, retry_later, failed };
  Attempt start_connect();
  bool finish_connect();
  void start_session();
  bool do_handshake();
  bool check_host_key();
  bool do_auth();
  void close_socket();
  // The host key the session was opened with, checked against the policy.
  HostKeyVerdict verify_host_key();

  Endpoint endpoint_;
  ConnectionSettings settings_;
  Phase phase_ = Phase::resolve;
  util::Wait wait_ = util::Wait::none;
  int fd_ = -1;
  std::unique_ptr<NameLookup> lookup_;  // while a host name is being looked up
  std::unique_ptr<Transport> transport_;  // jump host or proxy command, when there is one
  addrinfo* addresses_ = nullptr;
  addrinfo* next_address_ = nullptr;
  const addrinfo* connecting_to_ = nullptr;  // the address of the connect under way
  std::string connect_error_;
  bool reached_ = false;
  bool greeted_ = false;

  LIBSSH2_SESSION* session_ = nullptr;
  Clock::time_point last_receive_ = settings_.now();
  std::optional<Clock::time_point> last_tick_, resumed_;  // see note_tick()
  Clock::duration stalled_{};
  std::size_t recv_budget_ = turn_bytes;
  std::optional<Clock::time_point> ready_since_;
  bool trimmed_ = false;
  std::string banner_line_;  // the server's banner line, read whole, handed to libssh2 bytewise
  std::size_t banner_pos_ = 0;
  int recv_calls_left_ = turn_calls;
  // The socket said EAGAIN this turn: libssh2 asks again for every channel it
  // reads (a jump host reads hundreds), and the answer cannot change before
  // the event loop says the socket is readable.
  bool recv_dry_ = false;

  HostKeyPolicy& host_keys() const { return endpoint_.host_keys ? *endpoint_.host_keys : *settings_.host_keys; }
  void retry_connect_later();

  Identities identities_;   // what this connection authenticates with
  int attempts_left_ = 1;   // TCP connects still allowed after this one
  std::optional<Clock::time_point> retry_at_;  // the next connect attempt (ConnectionAttempts)

  std::optional<Login> logging_in_;  // from the handshake to ready
  LoginIdentity login_;
  std::vector<LIBSSH2_CHANNEL*> agent_channels_;  // opened by the worker, not taken yet

  std::string failure_reason_;
  std::string warning_;
};

}  // namespace tpush::ssh
