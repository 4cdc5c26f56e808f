// ProxyJump in-process: ONE authenticated session to a jump host carries many
// workers' SSH sessions, each over a direct-tcpip channel of it. A worker's
// own session speaks SSH on one end of a socketpair (its Transport); the jump
// host relays the other end to and from the worker's channel. Everything runs
// in the event loop: the jump host is a util::Pollable whose fd is an epoll
// fd over its own connection and every relay socket.
//
// libssh2 allows one packet half-sent per session: after a call returns
// EAGAIN with the session blocked outbound, that same call (same channel, same
// data) must be repeated before any other may send. The jump host keeps that
// order: it remembers which tunnel's operation is half-sent and finishes it
// first. libssh2 also opens one channel at a time per session, so tunnels wait
// in a queue for their channel; a busy jump host is spread over several
// sessions by the JumpPool.
//
// A persist master keeps jump hosts between runs with the worker sessions
// they carry (session_pool.h): a JumpHost lives while its pool or any of its
// tunnels' transports holds it (shared ownership), so a kept worker session
// never outlives the relay under it.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tpush/ssh/connection.h"
#include "tpush/ssh/transport.h"
#include "tpush/util/pollable.h"

typedef struct _LIBSSH2_CHANNEL LIBSSH2_CHANNEL;

namespace tpush::ssh {

class JumpHost final : public util::Pollable, public std::enable_shared_from_this<JumpHost> {
 public:
  // `name` names it in messages ("alice@bastion:22"). The endpoint may itself
  // be reached through another jump host (`endpoint.via`).
  JumpHost(std::string name, Endpoint endpoint, const ConnectionSettings& settings,
           std::chrono::seconds connect_timeout);
  ~JumpHost() override;
  JumpHost(const JumpHost&) = delete;
  JumpHost& operator=(const JumpHost&) = delete;

  // A worker's way to host:port through this jump host. The connection to the
  // jump host starts with the first tunnel that is opened.
  std::unique_ptr<Transport> tunnel_to(std::string host, std::uint16_t port);

  const std::string& name() const { return name_; }
  // Tunnels that still use it, and those waiting for their channel.
  std::size_t tunnels() const { return tunnels_.size(); }
  std::size_t waiting() const;
  // How long the tunnels waiting for a channel will wait, at the pace channels
  // have opened so far (zero until one has).
  std::chrono::duration<double> backlog() const;
  bool failed() const { return !failure_.empty(); }
  // Sessions that carried at least one channel (for `-v` and the bench).
  std::size_t channels_opened() const { return channels_opened_; }

  // Between runs of a persist master: the session and its tunnels stay, and
  // what the run lent (keys, known_hosts, the reaper of a proxy command under
  // it) is dropped. Until resumed, tick() keeps it alive without judging
  // silence: idle time is not the server's.
  void park(util::ChildReaper* reaper);
  bool parked() const { return parked_; }
  // A later run takes it up: the host key is checked again against that
  // run's known_hosts. When it is not accepted, the jump host fails with the
  // reason (its tunnels close) and false is returned.
  bool resume(Endpoint endpoint, const ConnectionSettings& settings);

  int fd() const override { return epoll_fd_; }
  util::Wait wait() const override { return util::Wait::read; }
  void advance(Clock::time_point now) override;
  void tick(Clock::time_point now) override;

  // The relay's per-tunnel buffer in each direction: reading from one side
  // stops while this much waits for the other (backpressure).
  static constexpr std::size_t buffer_limit = 256u << 10;

 private:
  struct Tunnel;
  class TunnelTransport;
  enum class Op { none, open, write, read, close };

  int open_tunnel(const std::shared_ptr<Tunnel>& t);  // the worker's end, or -1
  void start();
  void drive(Clock::time_point now);
  bool finish_pending();        // the half-sent operation first; false while it still blocks
  void open_channels();
  void pump(Tunnel& t);
  // Each says whether it moved bytes; a libssh2 call cut short is recorded as pending.
  bool flush_to_worker(Tunnel& t);
  bool read_channel(Tunnel& t);
  bool read_worker(Tunnel& t);
  bool write_channel(Tunnel& t);
  void close_channel(Tunnel& t);
  void fail_tunnel(Tunnel& t, std::string why);
  void fail_all(std::string why);
  bool blocked(int rc, Tunnel* t, Op op);
  void watch_relay(Tunnel& t);
  void watch_connection();
  void forget_closed();
  std::string libssh2_error() const;

  std::string name_;
  std::chrono::seconds alive_interval_;
  int alive_count_;
  Connection connection_;
  std::chrono::seconds connect_timeout_;
  int epoll_fd_ = -1;
  int watched_connection_fd_ = -1;
  unsigned watched_connection_events_ = 0;
  bool started_ = false;
  bool parked_ = false;
  Clock::time_point started_at_{};
  Clock::time_point resumed_at_{};  // silence counts from here
  std::string failure_;
  std::vector<std::shared_ptr<Tunnel>> tunnels_;
  std::deque<Tunnel*> to_open_;    // waiting for their channel, in order
  Tunnel* pending_ = nullptr;     // whose operation is half-sent
  Op pending_op_ = Op::none;
  std::size_t channels_opened_ = 0;
  std::optional<Clock::time_point> open_started_;    // the channel open in flight
  std::optional<std::chrono::duration<double>> open_pace_;  // a moving average of opens
};

// Workers reached through jump hosts share them: one JumpHost per chain of
// jumps (-J a,b: a, then b through a), made when the first worker needs it.
// Channels open one per round trip on a session, so when a session's queue
// would take longer than `spread_after` to drain at its measured pace (far
// jump hosts, big pods), another session to the same host takes new workers,
// up to `max_sessions`. Near (a LAN, loopback), one session carries all.
//
// A run's own pool ends with it. A persist master's pool (in its SessionPool)
// outlives runs: each run lends it its settings while it lasts; the hosts it
// already has are checked against the run's known_hosts when a worker's route
// through them is made, and between runs they are parked.
class JumpPool {
 public:
  struct Hop {
    std::string name;   // "alice@bastion:22", for messages
    Endpoint endpoint;  // where and as whom; for the first hop `via` may reach it (nested ProxyJump)
    std::chrono::seconds connect_timeout{10};
  };

  // `settings` is read when a jump host is made (during the run), so it may be
  // filled in after the pool is constructed; it must outlive the pool.
  explicit JumpPool(const ConnectionSettings& settings);
  ~JumpPool();

  // The way to host:port through `chain` (outermost hop first). Parked jump
  // hosts on the chain are resumed now, before a kept worker session through
  // them is used.
  TransportFactory route(std::vector<Hop> chain, std::string host, std::uint16_t port);
  // The chain's names, outermost first: "alice@a:22 > bob@b:22".
  static std::string name_of(const std::vector<Hop>& chain, std::size_t hops);

  // Registers every jump host with `reactor`, and those made later; null: none.
  void attach(util::Reactor* reactor);

  // A kept pool: `settings` serve until park(), which parks every jump host
  // still carrying a tunnel and closes the others; the pool's own settings
  // (its reaper) serve between runs.
  void lend(const ConnectionSettings& settings);
  void park();
  // Upkeep between runs, about every second: relays and keepalives move; jump
  // hosts that failed or carry no tunnel any more close.
  void tick(Clock::time_point now);
  void clear();

  static constexpr std::chrono::milliseconds spread_after{500};
  static constexpr std::size_t max_sessions = 8;

  // Sessions made so far, for messages and tests.
  std::size_t sessions() const;

 private:
  using Sessions = std::vector<std::shared_ptr<JumpHost>>;
  JumpHost& pick(const std::vector<Hop>& chain);
  // The endpoint of the jump host that ends the first `hops` hops of `chain`.
  Endpoint hop_endpoint(const std::vector<Hop>& chain, std::size_t hops);
  // Parked jump hosts on `chain` are checked against this run's known_hosts;
  // those refused leave the pool (a new session then says why, as a first
  // connection would).
  void resume_chain(const std::vector<Hop>& chain);
  void drop(Sessions& sessions, const std::function<bool(const JumpHost&)>& which);
  // Closes the jump hosts that failed or carry no tunnel (between runs).
  void close_unused();

  const ConnectionSettings& own_settings_;
  const ConnectionSettings* settings_;
  util::Reactor* reactor_ = nullptr;
  // key: the chain's names joined; each entry: the sessions to that last hop
  std::vector<std::pair<std::string, Sessions>> hosts_;
};

}  // namespace tpush::ssh
