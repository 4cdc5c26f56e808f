// ProxyJump in-process: ONE authenticated session to a jump host carries many
// workers' SSH sessions, each over a direct-tcpip channel of it
// (jump_tunnel.h). A worker's own session speaks SSH on one end of a
// socketpair (its Transport); the jump host relays the other end to and from
// the worker's channel. Everything runs in the event loop: the jump host is a
// util::Pollable whose fd is an epoll fd over its own connection and every
// relay socket.
//
// libssh2 allows one packet half-sent per session: after a call returns
// EAGAIN with the session blocked outbound, that same call (same channel, same
// data) must be repeated before any other may send. The jump host keeps that
// order: it remembers which tunnel's operation is half-sent and finishes it
// first. libssh2 also opens one channel at a time per session, so tunnels wait
// in their lane (jump_pool.h), and a session takes the next one when its
// opener is free.
//
// A persist master keeps jump hosts between runs with the worker sessions
// they carry (kept_sessions.h); the lane that holds a jump host lives while
// its pool or any of its tunnels' transports holds it, so a kept worker
// session never outlives the relay under it.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tpush/ssh/session.h"
#include "tpush/ssh/way/jump_tunnel.h"
#include "tpush/ssh/session_watch.h"
#include "tpush/util/pollable.h"

namespace tpush::ssh {

class JumpLane;

class JumpHost final : public util::Pollable, public std::enable_shared_from_this<JumpHost> {
 public:
  // `name` names it in messages ("alice@bastion:22"). The endpoint may itself
  // be reached through another jump host or a proxy command (`endpoint.via`).
  // `lane` holds it and the tunnels it opens channels for; it outlives it.
  JumpHost(std::string name, Endpoint endpoint, const ConnectionSettings& settings,
           std::chrono::seconds connect_timeout, JumpLane& lane);
  ~JumpHost() override;
  JumpHost(const JumpHost&) = delete;
  JumpHost& operator=(const JumpHost&) = delete;

  const std::string& name() const { return name_; }
  // Connects (once), then takes tunnels from its lane as its opener is free.
  void start();
  bool ready() const { return connection_->phase() == Session::Phase::ready; }
  bool failed() const { return !failure_.empty(); }
  const std::string& failure() const { return failure_; }
  // It failed because the jump host refused our login: its own words
  // ("auth failed for user ...").
  const std::string& login_refused() const { return login_refused_; }
  // Tunnels whose channel it opened and still relays (or is opening).
  std::size_t tunnels() const { return tunnels_.size() + (opening_ ? 1 : 0); }
  std::size_t channels_opened() const { return channels_opened_; }

  // How much of the last second its channel opener was busy (0 to 1), and
  // the mean time an open took: one per round trip to the jump host, plus its
  // own connect to the worker. An opener always busy is the session's limit.
  double opener_busy() const { return busy_share_; }
  std::optional<std::chrono::duration<double>> open_pace() const { return open_pace_; }
  std::optional<std::chrono::duration<double>> fastest_open() const { return fastest_open_; }
  // How much of the last second its connection could not take what it had to
  // send (0 to 1): a slow pipe (an IAP tunnel) full.
  double send_blocked() const { return blocked_share_; }
  // How long the open in flight has taken so far (none: no open in flight).
  std::optional<Clock::duration> open_in_flight(Clock::time_point now) const;

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
  // Moves everything that can move: the connection, channel opens, relays.
  void drive(Clock::time_point now);

  // The relay's per-tunnel buffer in each direction: reading from one side
  // stops while this much waits for the other (backpressure).
  static constexpr std::size_t buffer_limit = 256u << 10;

 private:
  enum class Op { none, open, write, read, close };

  bool finish_pending();        // the half-sent operation first; false while it still blocks
  void open_channels(Clock::time_point now);
  void channel_opened(Clock::time_point now);
  void pump(JumpTunnel& t);
  // Each says whether it moved bytes; a libssh2 call cut short is recorded as pending.
  bool flush_to_worker(JumpTunnel& t);
  bool read_channel(JumpTunnel& t);
  bool read_worker(JumpTunnel& t);
  bool write_channel(JumpTunnel& t);
  void close_channel(JumpTunnel& t);
  void fail_tunnel(JumpTunnel& t, std::string why);
  void fail_all(std::string why);
  bool blocked(int rc, JumpTunnel* t, Op op);
  void watch_relay(JumpTunnel& t);
  void watch_connection();
  void forget_closed();
  void note_busy(Clock::time_point now);
  std::string libssh2_error() const;

  std::string name_;
  JumpLane& lane_;
  SessionWatch watch_;  // its connect deadline and silence, as a worker's (silence counts from a resume)
  std::unique_ptr<Session> connection_;  // open_session()'s: a real Connection, or a test's fake
  Now now_;  // the run's clock (ConnectionSettings::now)
  int epoll_fd_ = -1;
  int watched_connection_fd_ = -1;
  unsigned watched_connection_events_ = 0;
  bool started_ = false;
  bool parked_ = false;
  std::string failure_, login_refused_;
  std::vector<std::shared_ptr<JumpTunnel>> tunnels_;
  std::shared_ptr<JumpTunnel> opening_;  // its channel open is in flight
  JumpTunnel* pending_ = nullptr;        // whose operation is half-sent
  Op pending_op_ = Op::none;
  std::size_t channels_opened_ = 0;
  std::optional<Clock::time_point> open_started_;  // the channel open in flight
  std::optional<std::chrono::duration<double>> open_pace_;  // a moving average of opens
  std::optional<std::chrono::duration<double>> fastest_open_;
  // The opener's busy time: its total, and the share of the last second.
  Clock::duration busy_total_{}, busy_at_last_tick_{};
  std::optional<Clock::time_point> last_busy_tick_;
  double busy_share_ = 0, blocked_share_ = 0;
};

}  // namespace tpush::ssh
