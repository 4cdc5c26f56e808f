// Workers reached through the same jump host share its sessions. Each way
// through jump hosts is a lane: one chain of jump hosts (-J a,b: b, reached
// through a's lane), or the workers of a TPU slice that can each forward to
// the others (--tunnel-through-iap: one IAP tunnel to one worker carries the
// slice). A lane's tunnels wait in one queue, and whichever of its sessions
// has a free channel opener takes the next.
//
// One session carries everything while it keeps up: a second login is made
// only when the first one's opener is the limit, busy for most of the last
// second while tunnels wait (a far jump host: one channel per round trip),
// or stuck on one open (a worker the jump host cannot reach holds its
// opener until the jump host's own connect gives up).
//
// A lane of gateways fails over: when its gateway cannot forward (sshd
// forbids it, the others are not reachable from it, it cannot be reached),
// its tunnels that never carried a byte wait for the next gateway; when none
// is left, each worker goes its own way (its own IAP tunnel), a few programs
// starting at once. Each is said once, not per worker.
//
// A run's own pool ends with it. A persist master's pool (in its KeptSessions)
// outlives runs: each run lends it its settings while it lasts; the hosts it
// already has are checked against the run's known_hosts when a worker's route
// through them is made, and between runs they are parked.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tpush/ssh/way/jump_host.h"

namespace tpush::ssh {

class JumpPool;

class JumpLane final : public std::enable_shared_from_this<JumpLane> {
 public:
  struct Gateway {
    std::string name;   // "alice@bastion:22", for messages
    Endpoint endpoint;  // where and as whom; `via` may reach it (a jump host, an IAP tunnel)
    std::chrono::seconds connect_timeout{kDefaultConnectTimeout};
  };
  struct Session {
    std::size_t gateway;  // to which of the gateways
    std::shared_ptr<JumpHost> host;
  };

  JumpLane(std::string key, JumpPool& pool);
  ~JumpLane();
  JumpLane(const JumpLane&) = delete;
  JumpLane& operator=(const JumpLane&) = delete;

  const std::string& key() const { return key_; }
  // The gateways in order of preference, as this run names them (endpoints
  // hold the run's keys and known_hosts).
  void set_gateways(std::vector<Gateway> gateways);
  const Gateway& gateway(std::size_t i) const { return gateways_[i]; }
  // Its workers may go their own ways (`what`: "its own IAP tunnel") when no
  // gateway can carry them.
  void allow_own_ways(std::string what) { own_way_name_ = std::move(what); }
  // A run starts: what the last one found failed is tried again.
  void new_run();
  // A worker's way to host:port through this lane; `own_way` (may be empty)
  // reaches it without a gateway, for when none can.
  std::unique_ptr<Transport> tunnel_to(std::string host, std::uint16_t port, TransportFactory own_way);

  const std::vector<Session>& sessions() const { return sessions_; }

  // For JumpHost: the next tunnel waiting for a channel (null: none), an
  // open that succeeded or failed, a session that failed (`unopened`: the
  // tunnel whose open was in flight; it carried nothing).
  std::shared_ptr<JumpTunnel> next_for(JumpHost& host);
  void opened(JumpHost& host, JumpTunnel& t);
  // `error`: libssh2's words ("Channel open failure (connect failed)").
  void open_failed(JumpHost& host, std::shared_ptr<JumpTunnel> t, const std::string& error);
  void session_failed(JumpHost& host, std::shared_ptr<JumpTunnel> unopened);
  // About every 100 ms (through its sessions' ticks): another session when
  // the ones it has are the limit.
  void balance(Clock::time_point now);

  // For the transports: a tunnel to queue (returns the worker's end, or -1);
  // its worker heard from its server (an own way's start is over); its
  // worker is done with it.
  int enqueue(const std::shared_ptr<JumpTunnel>& t);
  void answered(JumpTunnel& t);
  void closed(JumpTunnel& t);
  // Hands waiting tunnels to sessions whose opener is free, making the first
  // session when there is none.
  void dispatch(Clock::time_point now);
  // The run's clock (the pool's between runs; the system's once the pool is gone).
  Clock::time_point now() const;

  // Between runs: sessions that failed or carry nothing close. At a run's
  // start: parked sessions the run's known_hosts refused go.
  void close_unused(util::Reactor* reactor);
  void drop_refused(util::Reactor* reactor);
  // The pool is gone: no new sessions.
  void detach() { pool_ = nullptr; }

 private:
  class TunnelTransport;
  struct GatewayState {
    bool bad = false;  // it cannot carry the lane: no more tunnels through it
    std::size_t opens = 0, refusals = 0;
  };
  std::optional<std::size_t> gateway_of(const JumpHost& host) const;
  bool usable(const JumpHost& host) const;  // a session to a gateway not given up
  std::optional<std::size_t> first_good() const;
  bool has_other_way(std::size_t but) const;  // another good gateway, or own ways
  void say_once(const std::string& what);
  void give_up(std::size_t gateway, const std::string& why);
  void start_own_ways();
  void requeue(std::shared_ptr<JumpTunnel> t);
  void fail_waiting(const std::string& why);
  // `why`: for -v, why one more (empty: the first).
  void open_session(std::size_t gateway, const std::string& why);

  std::string key_;
  JumpPool* pool_;
  std::vector<Gateway> gateways_;
  std::vector<GatewayState> states_;  // parallel to gateways_
  std::string own_way_name_;          // empty: no own ways
  bool own_ways_ = false;             // every gateway failed: each worker its own way
  std::size_t own_ways_starting_ = 0;
  std::string failure_;  // the only way failed: new tunnels fail with this
  std::vector<Session> sessions_;
  std::optional<Clock::time_point> last_spread_;
  std::deque<std::shared_ptr<JumpTunnel>> waiting_;
  std::vector<std::shared_ptr<JumpTunnel>> own_;  // gone their own way
  std::set<std::string> said_;  // warnings given this run
};

class JumpPool {
 public:
  struct Hop {
    std::string name;   // "alice@bastion:22", for messages
    Endpoint endpoint;  // where and as whom; for the first hop `via` may reach it (nested ProxyJump)
    std::chrono::seconds connect_timeout{kDefaultConnectTimeout};
  };

  // `settings` is read when a jump host is made (during the run), so it may be
  // filled in after the pool is constructed; it must outlive the pool.
  explicit JumpPool(const ConnectionSettings& settings);
  ~JumpPool();
  JumpPool(const JumpPool&) = delete;
  JumpPool& operator=(const JumpPool&) = delete;

  // The way to host:port through `chain` (outermost hop first). Parked jump
  // hosts on the chain are resumed now, before a kept worker session through
  // them is used.
  TransportFactory route(std::vector<Hop> chain, std::string host, std::uint16_t port);
  // The way to host:port through the first of `gateways` that can forward
  // to it (a TPU slice's workers, each reached its own way), else through
  // `own_way` (`own_way_name` says what it is: "its own IAP tunnel"). `key`
  // names the lane (one per slice).
  TransportFactory route_through(const std::string& key, std::vector<Hop> gateways, std::string host,
                                 std::uint16_t port, TransportFactory own_way, const std::string& own_way_name);
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

  static constexpr std::size_t max_sessions = 8;
  // Own ways (an IAP tunnel per worker: a gcloud process each, ~1.4 s of CPU
  // to start) starting at once.
  static constexpr std::size_t own_ways_at_once = 4;

  // Sessions made so far, for messages and tests.
  std::size_t sessions() const;
  // The clock of the run it is lent to (else its own settings').
  Clock::time_point now() const { return settings_->now(); }

  // For lanes: a session to `gateway`, registered with the run's loop.
  std::shared_ptr<JumpHost> make_host(JumpLane& lane, const JumpLane::Gateway& gateway);

 private:
  void for_each_host(const std::function<void(JumpHost&)>& call);
  void close_unused();
  std::shared_ptr<JumpLane> lane(const std::string& key);
  // The endpoint of the jump host that ends the first `hops` hops of `chain`.
  Endpoint hop_endpoint(const std::vector<Hop>& chain, std::size_t hops);
  // Parked jump hosts of `lane` are checked against this run's known_hosts;
  // those refused fail (a new session then says why, as a first connection would).
  void resume(JumpLane& lane);

  const ConnectionSettings& own_settings_;
  const ConnectionSettings* settings_;
  util::Reactor* reactor_ = nullptr;
  std::vector<std::shared_ptr<JumpLane>> lanes_;
};

}  // namespace tpush::ssh
