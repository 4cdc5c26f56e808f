#include "tpush/ssh/way/jump_pool.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace tpush::ssh {
namespace {

// A second session is made at most this often, and only when the opener of
// every session has been busy this much of the last second, or stuck on one
// open at least this long (or 4 times an open's mean).
constexpr auto kSpreadEvery = std::chrono::seconds(1);
constexpr double kBusy = 0.9;
constexpr auto kStuckAtLeast = std::chrono::seconds(1);
// ... and opens take no more than this many times the fastest one.
constexpr double kAsFastAsEver = 2.0;
// A gateway that opened no channel yet and was refused this many times
// (connect failed) reaches nothing: the lane tries the next.
constexpr std::size_t kRefusalsBeforeFailover = 2;

void close_relay(JumpTunnel& t) {
  if (t.relay_fd >= 0) ::close(t.relay_fd);  // the worker's session reads EOF and asks why
  t.relay_fd = -1;
}

void fail(JumpTunnel& t, const std::string& why) {
  spdlog::debug("{}", why);
  if (t.failure.empty()) t.failure = why;
  close_relay(t);
  t.state = JumpTunnel::State::done;
}

double ms(std::chrono::duration<double> d) { return d.count() * 1000; }

}  // namespace

// The worker's side of a tunnel: what its Connection holds.
class JumpLane::TunnelTransport final : public Transport {
 public:
  TunnelTransport(std::shared_ptr<JumpLane> lane, std::shared_ptr<JumpTunnel> tunnel)
      : lane_(std::move(lane)), t_(std::move(tunnel)) {}
  ~TunnelTransport() override { close(); }

  int open() override { return lane_->enqueue(t_); }
  std::string failure() const override { return t_->own_way ? t_->own_way->failure() : t_->failure; }
  std::string notes() const override { return t_->own_way ? t_->own_way->notes() : std::string(); }
  std::string unanswered() const override { return t_->own_way ? t_->own_way->unanswered() : t_->failure; }
  std::chrono::steady_clock::duration waited() const override { return t_->waited_so_far(lane_->now()); }
  bool waiting_turn() const override { return t_->waiting(); }
  void answered() override { lane_->answered(*t_); }
  void outlive_run(util::ChildReaper* reaper) override {
    if (t_->own_way) t_->own_way->outlive_run(reaper);
  }
  void close() override {
    if (closed_) return;
    closed_ = true;
    t_->worker_eof = true;  // the worker's end closes with its session
    lane_->closed(*t_);
  }

 private:
  std::shared_ptr<JumpLane> lane_;
  std::shared_ptr<JumpTunnel> t_;
  bool closed_ = false;
};

// ---- JumpLane ----------------------------------------------------------------

JumpLane::JumpLane(std::string key, JumpPool& pool) : key_(std::move(key)), pool_(&pool) {}

JumpLane::~JumpLane() {
  for (auto& t : waiting_) close_relay(*t);
}

void JumpLane::set_gateways(std::vector<Gateway> gateways) {
  const bool same = gateways.size() == gateways_.size() &&
                    std::equal(gateways.begin(), gateways.end(), gateways_.begin(),
                               [](const Gateway& a, const Gateway& b) { return a.name == b.name; });
  gateways_ = std::move(gateways);
  if (!same) states_.assign(gateways_.size(), {});
}

void JumpLane::new_run() {
  failure_.clear();
  own_ways_ = false;
  said_.clear();
  for (auto& g : states_) g = {};  // what failed last run is tried again
}

std::unique_ptr<Transport> JumpLane::tunnel_to(std::string host, std::uint16_t port, TransportFactory own_way) {
  auto t = std::make_shared<JumpTunnel>();
  t->host = std::move(host);
  t->port = port;
  t->own_factory = std::move(own_way);
  return std::make_unique<TunnelTransport>(shared_from_this(), std::move(t));
}

std::optional<std::size_t> JumpLane::gateway_of(const JumpHost& host) const {
  for (const auto& s : sessions_)
    if (s.host.get() == &host) return s.gateway;
  return std::nullopt;
}

bool JumpLane::usable(const JumpHost& host) const {
  const auto g = gateway_of(host);
  return g && !states_[*g].bad;
}

std::optional<std::size_t> JumpLane::first_good() const {
  for (std::size_t g = 0; g < states_.size(); ++g)
    if (!states_[g].bad) return g;
  return std::nullopt;
}

Clock::time_point JumpLane::now() const { return pool_ ? pool_->now() : Clock::now(); }

int JumpLane::enqueue(const std::shared_ptr<JumpTunnel>& t) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, pair) != 0) {
    t->failure = "jump host " + key_ + ": cannot create a socketpair: " + std::strerror(errno);
    return -1;
  }
  t->relay_fd = pair[1];
  t->queued_at = now();
  if (!pool_) {
    fail(*t, "jump host " + key_ + ": the run that made this way has ended");
  } else if (!failure_.empty()) {
    fail(*t, failure_);
  } else {
    waiting_.push_back(t);
    dispatch(t->queued_at);
  }
  return pair[0];  // a failed tunnel's worker reads EOF at once and asks failure()
}

void JumpLane::closed(JumpTunnel& t) {
  switch (t.state) {
    case JumpTunnel::State::queued:  // never got its turn
      std::erase_if(waiting_, [&](const auto& w) { return w.get() == &t; });
      close_relay(t);
      t.state = JumpTunnel::State::done;
      break;
    case JumpTunnel::State::own_way:
      t.own_way->close();
      if (std::exchange(t.own_starting, false)) --own_ways_starting_;
      std::erase_if(own_, [&](const auto& o) { return o.get() == &t; });
      t.state = JumpTunnel::State::done;
      start_own_ways();
      break;
    case JumpTunnel::State::open:
      t.state = JumpTunnel::State::closing;
      [[fallthrough]];
    case JumpTunnel::State::opening:  // closed once its open is answered
    case JumpTunnel::State::closing:
      if (auto host = t.carrier.lock()) host->drive(now());
      break;
    case JumpTunnel::State::done:
      break;
  }
}

void JumpLane::dispatch(Clock::time_point now) {
  if (own_ways_) return start_own_ways();
  if (waiting_.empty()) return;
  bool alive = false;
  for (const auto& s : std::vector<Session>(sessions_)) {  // a session may fail while driven
    if (states_[s.gateway].bad || s.host->failed()) continue;
    alive = true;
    if (s.host->ready()) s.host->drive(now);  // takes the next tunnel if its opener is free
  }
  if (!alive && !waiting_.empty()) {
    if (const auto g = first_good()) open_session(*g, {});
    else fail_waiting("jump host " + key_ + ": no way to it");
  }
}

std::shared_ptr<JumpTunnel> JumpLane::next_for(JumpHost& host) {
  if (own_ways_ || !usable(host)) return nullptr;
  const Clock::time_point at = now();
  while (!waiting_.empty()) {
    auto t = std::move(waiting_.front());
    waiting_.pop_front();
    if (t->worker_eof) {  // the worker gave up before its turn
      close_relay(*t);
      t->state = JumpTunnel::State::done;
      continue;
    }
    t->waited += at - t->queued_at;
    return t;
  }
  return nullptr;
}

void JumpLane::opened(JumpHost& host, JumpTunnel&) {
  if (const auto g = gateway_of(host)) ++states_[*g].opens;
}

bool JumpLane::has_other_way(std::size_t but) const {
  for (std::size_t g = 0; g < states_.size(); ++g)
    if (g != but && !states_[g].bad) return true;
  return !own_way_name_.empty();
}

// A refused open: the gateway cannot forward at all (sshd forbids it), or
// reaches none of the workers it tried before any other (a gateway in
// another network): another way is tried, and the tunnel, which carried
// nothing, waits for it. Otherwise the worker itself is not reachable.
void JumpLane::open_failed(JumpHost& host, std::shared_ptr<JumpTunnel> t, const std::string& error) {
  const auto g = gateway_of(host);
  if (g && !states_[*g].bad && has_other_way(*g) && !t->worker_eof) {
    const bool prohibited = error.find("administratively prohibited") != std::string::npos;
    const bool refused = error.find("(connect failed)") != std::string::npos;
    if (prohibited) {
      requeue(std::move(t));
      return give_up(*g, gateways_[*g].name + " does not forward connections (" + error + ")");
    }
    if (refused && states_[*g].opens == 0) {
      requeue(std::move(t));
      if (++states_[*g].refusals >= kRefusalsBeforeFailover)
        give_up(*g, gateways_[*g].name + " reached none of the workers it tried (" + error + ")");
      return;
    }
  }
  fail(*t, "jump host " + host.name() + " could not open a connection to " + t->host + ":" + std::to_string(t->port) +
               " (" + error + ")");
}

void JumpLane::session_failed(JumpHost& host, std::shared_ptr<JumpTunnel> unopened) {
  if (unopened && unopened->worker_eof) {
    fail(*unopened, host.failure());
    unopened.reset();
  }
  const auto g = gateway_of(host);
  bool others = false;
  for (const auto& s : sessions_)
    others = others || (s.host.get() != &host && !states_[s.gateway].bad && !s.host->failed());
  if (!g || states_[*g].bad || others) {  // another session of the lane goes on
    if (unopened) requeue(std::move(unopened));
    return dispatch(now());
  }
  // A gateway that refused our login: the slice's other workers take the
  // same keys, so each worker fails as its own login would, in those words.
  if (!own_way_name_.empty() && !host.login_refused().empty()) {
    failure_ = host.login_refused() + " (at " + gateways_[*g].name + ", the way to the others)";
    if (unopened) fail(*unopened, failure_);
    return fail_waiting(failure_);
  }
  if (has_other_way(*g)) {
    if (unopened) requeue(std::move(unopened));
    return give_up(*g, host.failure());
  }
  // The lane's only way failed: every worker behind it fails with its reason.
  failure_ = host.failure();
  if (unopened) fail(*unopened, failure_);
  fail_waiting(failure_);
}

void JumpLane::requeue(std::shared_ptr<JumpTunnel> t) {
  t->channel.reset();  // none was opened
  t->carrier.reset();
  t->state = JumpTunnel::State::queued;
  t->queued_at = now();
  ++t->gateways_tried;
  waiting_.push_front(std::move(t));
}

void JumpLane::fail_waiting(const std::string& why) {
  auto waiting = std::move(waiting_);
  waiting_.clear();
  for (auto& t : waiting) fail(*t, why);
}


void JumpLane::say_once(const std::string& what) {
  if (said_.insert(what).second) spdlog::warn("{}", what);
}

// Gateway `g` cannot carry the lane: its sessions take no more tunnels (those
// they carry go on), and the next good gateway, or else own ways, take the rest.
void JumpLane::give_up(std::size_t g, const std::string& why) {
  states_[g].bad = true;
  bool covered = false;  // a session to a good gateway is there already
  for (const auto& s : sessions_) covered = covered || (!states_[s.gateway].bad && !s.host->failed());
  if (const auto next = first_good()) {
    say_once(key_ + ": " + why + "; going through " + gateways_[*next].name + " instead");
    if (!covered) open_session(*next, {});
    return dispatch(now());
  }
  say_once(key_ + ": " + why + "; nothing else to go through: each worker goes through " + own_way_name_ + ", " +
           std::to_string(JumpPool::own_ways_at_once) + " starting at once");
  own_ways_ = true;
  start_own_ways();
}

// Every gateway failed: each waiting worker goes its own way (an IAP tunnel
// of its own: a gcloud each, ~1.4 s of CPU to start), a few at once; one
// more starts as one is answered or closes.
void JumpLane::start_own_ways() {
  while (own_ways_starting_ < JumpPool::own_ways_at_once && !waiting_.empty()) {
    auto t = std::move(waiting_.front());
    waiting_.pop_front();
    if (t->worker_eof) {
      close_relay(*t);
      t->state = JumpTunnel::State::done;
      continue;
    }
    t->waited += now() - t->queued_at;
    if (!t->own_factory) {
      fail(*t, "jump host " + key_ + " could not open a connection to " + t->host + ": no way left");
      continue;
    }
    t->own_way = t->own_factory();
    // The program reads and writes it as its stdin and stdout: blocking, as programs expect.
    ::fcntl(t->relay_fd, F_SETFL, ::fcntl(t->relay_fd, F_GETFL) & ~O_NONBLOCK);
    if (!t->own_way->open_on(t->relay_fd)) {
      fail(*t, t->own_way->failure());
      continue;
    }
    close_relay(*t);  // the program holds it now
    t->state = JumpTunnel::State::own_way;
    t->own_starting = true;
    ++own_ways_starting_;
    own_.push_back(std::move(t));
  }
}

void JumpLane::answered(JumpTunnel& t) {
  if (!std::exchange(t.own_starting, false)) return;
  --own_ways_starting_;
  start_own_ways();
}

// Called about every 100 ms while a run drives the lane's sessions. Another
// session goes to a gateway that has none yet, if there is one (another
// worker of a slice: IAP tunnels are slow pipes), else to the same one.
void JumpLane::balance(Clock::time_point now) {
  if (own_ways_ || waiting_.empty() || !pool_) return;
  if (last_spread_ && now - *last_spread_ < kSpreadEvery) return;
  std::size_t live = 0;
  std::string why;
  std::vector<bool> has_session(gateways_.size(), false);
  for (const auto& s : sessions_) {
    if (states_[s.gateway].bad || s.host->failed()) continue;
    if (!s.host->ready()) return;  // one is coming
    ++live;
    has_session[s.gateway] = true;
    const JumpHost& h = *s.host;
    const auto pace = h.open_pace().value_or(std::chrono::duration<double>{0});
    const auto stuck_after = std::max<std::chrono::duration<double>>(kStuckAtLeast, pace * 4);
    const auto in_flight = h.open_in_flight(now);
    if (in_flight && *in_flight > stuck_after) {
      why = "its channel open has waited " + std::to_string(ms(*in_flight) / 1000).substr(0, 4) +
            " s for an answer (the jump host cannot reach that worker yet)";
    } else if (h.opener_busy() >= kBusy && pace <= h.fastest_open().value_or(pace) * kAsFastAsEver) {
      // Opens as quick as they ever were, one after the other: round trips
      // are the limit, and another session opens as many more. Opens slower
      // than that are a loaded jump host, which another login loads more.
      why = "its channel opens are the limit: busy " + std::to_string(static_cast<int>(h.opener_busy() * 100)) +
            "% of the last second, one every " + std::to_string(static_cast<int>(ms(pace))) + " ms (the fastest " +
            std::to_string(static_cast<int>(ms(*h.fastest_open()))) + " ms)";
    } else if (h.send_blocked() >= kBusy) {
      why = "it sends as fast as its connection takes: blocked " +
            std::to_string(static_cast<int>(h.send_blocked() * 100)) + "% of the last second";
    } else {
      return;  // this one keeps up
    }
  }
  if (live == 0 || live >= JumpPool::max_sessions) return;
  std::optional<std::size_t> to;
  for (std::size_t g = 0; g < gateways_.size() && !to; ++g)
    if (!states_[g].bad && !has_session[g]) to = g;
  if (!to) to = first_good();
  if (!to) return;
  last_spread_ = now;
  open_session(*to, why + ", " + std::to_string(waiting_.size()) + " worker(s) waiting");
}

void JumpLane::open_session(std::size_t g, const std::string& why) {
  if (!pool_) return fail_waiting("jump host " + key_ + ": the run that made this way has ended");
  auto host = pool_->make_host(*this, gateways_[g]);
  sessions_.push_back({g, host});
  if (!why.empty()) spdlog::debug("jump host {}: session {}: {}", gateways_[g].name, sessions_.size(), why);
  host->start();
}

void JumpLane::close_unused(util::Reactor* reactor) {
  std::erase_if(sessions_, [&](const Session& s) {
    if (!s.host->failed() && s.host->tunnels() > 0) return false;
    if (reactor) reactor->remove(*s.host);
    return true;
  });
}

void JumpLane::drop_refused(util::Reactor* reactor) {
  std::erase_if(sessions_, [&](const Session& s) {
    if (!s.host->failed()) return false;
    spdlog::debug("jump host {}: kept session not used", s.host->name());
    if (reactor) reactor->remove(*s.host);
    return true;
  });
  failure_.clear();  // a new session says why, as a first connection would
}

// ---- JumpPool ------------------------------------------------------------------

JumpPool::JumpPool(const ConnectionSettings& settings) : own_settings_(settings), settings_(&settings) {}

JumpPool::~JumpPool() { clear(); }

void JumpPool::for_each_host(const std::function<void(JumpHost&)>& call) {
  for (auto& lane : lanes_)
    for (const auto& s : lane->sessions()) call(*s.host);
}

void JumpPool::attach(util::Reactor* reactor) {
  for_each_host([&](JumpHost& h) {
    if (reactor_) reactor_->remove(h);
    if (reactor) reactor->add(h);
  });
  reactor_ = reactor;
}

void JumpPool::lend(const ConnectionSettings& settings) {
  settings_ = &settings;
  for (auto& lane : lanes_) lane->new_run();
}

void JumpPool::park() {
  attach(nullptr);
  settings_ = &own_settings_;
  close_unused();
  for_each_host([&](JumpHost& h) { h.park(own_settings_.reaper); });
}

void JumpPool::tick(Clock::time_point now) {
  for_each_host([&](JumpHost& h) {
    h.advance(now);
    h.tick(now);
  });
  close_unused();
}

void JumpPool::close_unused() {
  for (auto& lane : lanes_) lane->close_unused(reactor_);
  std::erase_if(lanes_, [](const auto& lane) { return lane->sessions().empty(); });
}

void JumpPool::clear() {
  attach(nullptr);
  for (auto& lane : lanes_) lane->detach();
  lanes_.clear();
}

std::size_t JumpPool::sessions() const {
  std::size_t n = 0;
  for (const auto& lane : lanes_) n += lane->sessions().size();
  return n;
}

std::string JumpPool::name_of(const std::vector<Hop>& chain, std::size_t hops) {
  std::string key;
  for (std::size_t i = 0; i < hops && i < chain.size(); ++i) key += (key.empty() ? "" : " > ") + chain[i].name;
  return key;
}

std::shared_ptr<JumpLane> JumpPool::lane(const std::string& key) {
  for (auto& lane : lanes_)
    if (lane->key() == key) return lane;
  lanes_.push_back(std::make_shared<JumpLane>(key, *this));
  return lanes_.back();
}

std::shared_ptr<JumpHost> JumpPool::make_host(JumpLane& lane, const JumpLane::Gateway& gateway) {
  auto host = std::make_shared<JumpHost>(gateway.name, gateway.endpoint, *settings_, gateway.connect_timeout, lane);
  if (reactor_) reactor_->add(*host);
  return host;
}

TransportFactory JumpPool::route(std::vector<Hop> chain, std::string host, std::uint16_t port) {
  auto l = lane(name_of(chain, chain.size()));
  l->set_gateways({{chain.back().name, hop_endpoint(chain, chain.size()), chain.back().connect_timeout}});
  resume(*l);
  return [l, host = std::move(host), port] { return l->tunnel_to(host, port, {}); };
}

TransportFactory JumpPool::route_through(const std::string& key, std::vector<Hop> gateways, std::string host,
                                         std::uint16_t port, TransportFactory own_way,
                                         const std::string& own_way_name) {
  auto l = lane(key);
  std::vector<JumpLane::Gateway> ways;
  for (auto& g : gateways) ways.push_back({std::move(g.name), std::move(g.endpoint), g.connect_timeout});
  l->set_gateways(std::move(ways));
  if (own_way) l->allow_own_ways(own_way_name);
  resume(*l);
  return [l, host = std::move(host), port, own_way = std::move(own_way)] { return l->tunnel_to(host, port, own_way); };
}

void JumpPool::resume(JumpLane& lane) {
  bool refused = false;
  for (const auto& s : lane.sessions())
    if (s.host->parked() && !s.host->resume(lane.gateway(s.gateway).endpoint, *settings_)) refused = true;
  if (refused) lane.drop_refused(reactor_);
}

Endpoint JumpPool::hop_endpoint(const std::vector<Hop>& chain, std::size_t hops) {
  const Hop& last = chain[hops - 1];
  Endpoint endpoint = last.endpoint;
  if (hops > 1) endpoint.via = route({chain.begin(), chain.begin() + hops - 1}, last.endpoint.host, last.endpoint.port);
  return endpoint;
}

}  // namespace tpush::ssh
