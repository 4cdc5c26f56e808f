#include "tpush/ssh/jump_host.h"

#include <libssh2.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "tpush/ssh/hangup.h"
#include "tpush/ssh/session_wait.h"

namespace tpush::ssh {
namespace {

std::array<char, 64 * 1024> scratch;  // one read at a time, in the one event-loop thread

std::string seconds_text(std::chrono::seconds s) { return std::to_string(s.count()) + "s"; }

}  // namespace

// One worker's way through the jump host: its relay socket, its channel and
// what waits in each direction.
struct JumpHost::Tunnel {
  enum class State { queued, opening, open, closing, done };

  std::string host;
  std::uint16_t port = 22;
  State state = State::queued;
  int relay_fd = -1;        // our end of the worker's socketpair
  unsigned watched = 0;     // epoll events on relay_fd
  LIBSSH2_CHANNEL* channel = nullptr;
  std::string to_channel;   // from the worker, not yet written to the channel
  std::size_t to_channel_sent = 0;
  std::string to_worker;    // from the channel, not yet written to the worker
  std::size_t to_worker_sent = 0;
  bool registered = false;  // relay_fd is in the epoll set
  bool worker_eof = false;  // the worker closed its side (it is done)
  bool channel_eof = false; // the worker's server sent EOF
  bool eof_sent = false;
  std::string failure;
};

class JumpHost::TunnelTransport final : public Transport {
 public:
  TunnelTransport(std::shared_ptr<JumpHost> host, std::shared_ptr<Tunnel> tunnel)
      : host_(std::move(host)), tunnel_(std::move(tunnel)) {}
  int open() override { return host_->open_tunnel(tunnel_); }
  std::string failure() const override { return tunnel_->failure; }
  void close() override {
    if (tunnel_->worker_eof) return;
    tunnel_->worker_eof = true;  // the worker's end closes with its session
    if (tunnel_->state == Tunnel::State::open) tunnel_->state = Tunnel::State::closing;
    host_->drive(Clock::now());
  }

 private:
  std::shared_ptr<JumpHost> host_;
  std::shared_ptr<Tunnel> tunnel_;
};

JumpHost::JumpHost(std::string name, Endpoint endpoint, const ConnectionSettings& settings,
                   std::chrono::seconds connect_timeout)
    : name_(std::move(name)),
      alive_interval_(endpoint.alive_interval),
      alive_count_(endpoint.alive_count),
      connection_(std::move(endpoint), settings),
      connect_timeout_(connect_timeout),
      epoll_fd_(::epoll_create1(EPOLL_CLOEXEC)) {}

JumpHost::~JumpHost() {
  if (channels_opened_ > 0 && open_pace_)
    spdlog::debug("jump host {}: carried {} worker(s), one channel opened every {:.1f} ms", name_,
                  channels_opened_, open_pace_->count() * 1000);
  for (auto& t : tunnels_)
    if (t->relay_fd >= 0) ::close(t->relay_fd);
  connection_.abandon();  // frees every channel with the session
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
}

std::unique_ptr<Transport> JumpHost::tunnel_to(std::string host, std::uint16_t port) {
  auto t = std::make_shared<Tunnel>();
  t->host = std::move(host);
  t->port = port;
  return std::make_unique<TunnelTransport>(shared_from_this(), std::move(t));
}

void JumpHost::park(util::ChildReaper* reaper) {
  parked_ = true;
  connection_.park(reaper);
}

bool JumpHost::resume(Endpoint endpoint, const ConnectionSettings& settings) {
  parked_ = false;
  alive_interval_ = endpoint.alive_interval;
  alive_count_ = endpoint.alive_count;
  resumed_at_ = Clock::now();
  if (connection_.resume(std::move(endpoint), settings)) return true;
  fail_all("jump host " + name_ + ": " + connection_.failure_reason());
  return false;
}

std::size_t JumpHost::waiting() const { return to_open_.size(); }

std::chrono::duration<double> JumpHost::backlog() const {
  return open_pace_ ? *open_pace_ * static_cast<double>(to_open_.size()) : std::chrono::duration<double>{0};
}

int JumpHost::open_tunnel(const std::shared_ptr<Tunnel>& t) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, pair) != 0) {
    t->failure = "jump host " + name_ + ": cannot create a socketpair: " + std::strerror(errno);
    return -1;
  }
  t->relay_fd = pair[1];
  tunnels_.push_back(t);
  if (failed()) {
    fail_tunnel(*t, failure_);
    return pair[0];  // the worker reads EOF at once and asks failure()
  }
  watch_relay(*t);
  to_open_.push_back(t.get());
  if (!started_) start();
  drive(Clock::now());
  return pair[0];
}

void JumpHost::start() {
  started_ = true;
  started_at_ = Clock::now();
  spdlog::debug("jump host {}: connecting", name_);
}

void JumpHost::advance(Clock::time_point now) {
  // Which fds are ready does not matter: drive() looks at every tunnel. Reading
  // the events empties the ready list, so the loop's watch rests until more come.
  std::array<epoll_event, 256> events;
  while (::epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), 0) ==
         static_cast<int>(events.size())) {
  }
  drive(now);
}

void JumpHost::tick(Clock::time_point now) {
  if (!started_ || failed()) return;
  if (!parked_) connection_.note_tick(now);
  if (connection_.phase() != Connection::Phase::ready) {
    if (now - started_at_ - connection_.stalled() >= connect_timeout_)
      return fail_all("jump host " + name_ + ": connect timed out after " + seconds_text(connect_timeout_) +
                      " (" + connection_.phase_name() + ")");
    connection_.tick(now);  // a connect attempt due again
    return drive(now);
  }
  const auto silent =
      std::chrono::duration_cast<std::chrono::seconds>(now - std::max(connection_.heard_from(), resumed_at_));
  if (!parked_ && silent >= alive_interval_ * alive_count_)
    return fail_all("jump host " + name_ + ": connection lost (no response for " + seconds_text(silent) + ")");
  if (!pending_) connection_.tick(now);  // keepalive, never over a half-sent packet
  drive(now);
}

void JumpHost::drive(Clock::time_point now) {
  (void)now;
  if (failed() || !started_) return;
  connection_.new_turn();
  if (connection_.phase() != Connection::Phase::ready) {
    connection_.advance();
    if (connection_.phase() == Connection::Phase::failed)
      return fail_all("jump host " + name_ + ": " + connection_.failure_reason());
    if (connection_.phase() != Connection::Phase::ready) return watch_connection();
    spdlog::debug("jump host {}: connected", name_);
    if (!connection_.warning().empty()) spdlog::warn("{}", connection_.warning());
  }
  if (finish_pending()) {
    open_channels();
    for (std::size_t i = 0; i < tunnels_.size() && !pending_ && !failed(); ++i) pump(*tunnels_[i]);
  }
  if (failed()) return;
  forget_closed();
  watch_connection();
}

// Records a half-sent packet: libssh2 then refuses every other send until
// this same call is made again.
bool JumpHost::blocked(int rc, Tunnel* t, Op op) {
  if (rc != LIBSSH2_ERROR_EAGAIN || !sending(connection_.session())) return false;
  pending_ = t;
  pending_op_ = op;
  return true;
}

bool JumpHost::finish_pending() {
  if (!pending_) return true;
  Tunnel& t = *pending_;
  const Op op = pending_op_;
  pending_ = nullptr;
  pending_op_ = Op::none;
  switch (op) {  // exactly the call that was cut short
    case Op::open: open_channels(); break;
    case Op::write: write_channel(t); break;
    case Op::read: read_channel(t); break;
    case Op::close: close_channel(t); break;
    case Op::none: break;
  }
  return pending_ == nullptr;
}

void JumpHost::open_channels() {
  LIBSSH2_SESSION* session = connection_.session();
  while (!to_open_.empty() && !pending_ && !failed()) {
    Tunnel& t = *to_open_.front();
    if (t.worker_eof && t.state == Tunnel::State::queued) {  // the worker gave up before its turn
      to_open_.pop_front();
      t.state = Tunnel::State::done;
      continue;
    }
    t.state = Tunnel::State::opening;
    if (!open_started_) open_started_ = Clock::now();
    // One open at a time per session: libssh2 keeps its progress in the session.
    t.channel = libssh2_channel_direct_tcpip_ex(session, t.host.c_str(), t.port, "127.0.0.1", 22);
    if (!t.channel) {
      const int rc = libssh2_session_last_errno(session);
      if (rc == LIBSSH2_ERROR_EAGAIN) {
        blocked(rc, &t, Op::open);
        return;  // waiting for the server's answer
      }
      to_open_.pop_front();
      open_started_.reset();
      if (is_hangup(rc)) return fail_all("jump host " + name_ + ": connection lost (" + libssh2_error() + ")");
      fail_tunnel(t, "jump host " + name_ + " could not open a connection to " + t.host + ":" +
                         std::to_string(t.port) + " (" + libssh2_error() + ")");
      continue;
    }
    to_open_.pop_front();
    const std::chrono::duration<double> took = Clock::now() - *open_started_;
    open_pace_ = open_pace_ ? *open_pace_ * 0.8 + took * 0.2 : took;
    open_started_.reset();
    t.state = t.worker_eof ? Tunnel::State::closing : Tunnel::State::open;
    ++channels_opened_;
    pump(t);
  }
}

// Moves what there is in both directions for one tunnel, until nothing moves.
void JumpHost::pump(Tunnel& t) {
  for (bool moved = true; moved && t.state == Tunnel::State::open && !pending_ && !failed();) {
    moved = flush_to_worker(t);
    moved = read_channel(t) || moved;
    moved = read_worker(t) || moved;
    moved = write_channel(t) || moved;
  }
  if (t.state == Tunnel::State::closing && !pending_ && !failed()) close_channel(t);
  watch_relay(t);
}

bool JumpHost::flush_to_worker(Tunnel& t) {
  bool moved = false;
  while (t.to_worker_sent < t.to_worker.size() && t.relay_fd >= 0) {
    const ssize_t n = ::write(t.relay_fd, t.to_worker.data() + t.to_worker_sent, t.to_worker.size() - t.to_worker_sent);
    if (n > 0) {
      t.to_worker_sent += static_cast<std::size_t>(n);
      moved = true;
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      return moved;
    } else {
      t.worker_eof = true;  // EPIPE: the worker's session is gone
      t.state = Tunnel::State::closing;
      return false;
    }
  }
  t.to_worker.clear();
  t.to_worker_sent = 0;
  return moved;
}

bool JumpHost::read_channel(Tunnel& t) {
  if (t.state != Tunnel::State::open || !t.to_worker.empty() || t.channel_eof) return false;
  const ssize_t rc = libssh2_channel_read(t.channel, scratch.data(), scratch.size());
  if (rc > 0) {
    t.to_worker.assign(scratch.data(), static_cast<std::size_t>(rc));
    return true;
  }
  if (rc == LIBSSH2_ERROR_EAGAIN) {
    blocked(static_cast<int>(rc), &t, Op::read);  // a window adjust may be half-sent
    return false;
  }
  if (rc < 0 && is_hangup(static_cast<int>(rc))) {
    fail_all("jump host " + name_ + ": connection lost (" + libssh2_error() + ")");
    return false;
  }
  if (rc == 0 && !libssh2_channel_eof(t.channel)) return false;
  // The worker's server closed its side (or the channel failed): the worker reads EOF.
  t.channel_eof = true;
  if (t.relay_fd >= 0) ::shutdown(t.relay_fd, SHUT_WR);
  return true;
}

bool JumpHost::read_worker(Tunnel& t) {
  if (t.to_channel_sent < t.to_channel.size() || t.worker_eof || t.relay_fd < 0) return false;
  t.to_channel.clear();
  t.to_channel_sent = 0;
  const ssize_t n = ::read(t.relay_fd, scratch.data(), scratch.size());
  if (n > 0) {
    t.to_channel.assign(scratch.data(), static_cast<std::size_t>(n));
    return true;
  }
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return false;
  t.worker_eof = true;  // the worker is done: nothing more goes either way
  t.state = Tunnel::State::closing;
  return false;
}

bool JumpHost::write_channel(Tunnel& t) {
  bool moved = false;
  while (t.channel && t.to_channel_sent < t.to_channel.size()) {
    const ssize_t rc = libssh2_channel_write(t.channel, t.to_channel.data() + t.to_channel_sent,
                                             t.to_channel.size() - t.to_channel_sent);
    if (rc == LIBSSH2_ERROR_EAGAIN || rc == 0) {  // the socket or the channel's window is full
      blocked(LIBSSH2_ERROR_EAGAIN, &t, Op::write);
      return moved;
    }
    if (rc < 0) {
      if (is_hangup(static_cast<int>(rc)))
        fail_all("jump host " + name_ + ": connection lost (" + libssh2_error() + ")");
      else
        fail_tunnel(t, "jump host " + name_ + ": the connection to " + t.host + ":" + std::to_string(t.port) +
                           " failed (" + libssh2_error() + ")");
      return false;
    }
    t.to_channel_sent += static_cast<std::size_t>(rc);
    moved = true;
  }
  return moved;
}

void JumpHost::close_channel(Tunnel& t) {
  if (t.relay_fd >= 0) {
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, t.relay_fd, nullptr);
    ::close(t.relay_fd);
    t.relay_fd = -1;
  }
  if (t.channel) {
    const int rc = libssh2_channel_close(t.channel);
    if (rc == LIBSSH2_ERROR_EAGAIN) {
      blocked(rc, &t, Op::close);
      return;  // sent, or waiting for the server's close: again on the next turn
    }
    libssh2_channel_free(t.channel);
    t.channel = nullptr;
  }
  t.state = Tunnel::State::done;
}

void JumpHost::fail_tunnel(Tunnel& t, std::string why) {
  spdlog::debug("{}", why);
  if (t.failure.empty()) t.failure = std::move(why);
  t.worker_eof = true;
  if (t.relay_fd >= 0) {
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, t.relay_fd, nullptr);
    ::close(t.relay_fd);  // the worker's session reads EOF and fails with t.failure
    t.relay_fd = -1;
  }
  t.state = t.channel ? Tunnel::State::closing : Tunnel::State::done;
  std::erase(to_open_, &t);
}

void JumpHost::fail_all(std::string why) {
  spdlog::debug("{}", why);
  failure_ = std::move(why);
  pending_ = nullptr;
  to_open_.clear();
  for (auto& t : tunnels_) {
    t->channel = nullptr;  // freed with the session
    fail_tunnel(*t, failure_);
    t->state = Tunnel::State::done;
  }
  connection_.abandon();
  watched_connection_fd_ = -1;
  forget_closed();
}

void JumpHost::forget_closed() {
  std::erase_if(tunnels_, [this](const std::shared_ptr<Tunnel>& t) {
    return t->state == Tunnel::State::done && t.get() != pending_;
  });
}

// Registered from the start, so a hang-up is always seen; interest follows the buffers.
void JumpHost::watch_relay(Tunnel& t) {
  if (t.relay_fd < 0) return;
  unsigned want = 0;
  if (t.to_channel_sent == t.to_channel.size() && !t.worker_eof) want |= EPOLLIN;  // room for the worker's bytes
  if (t.to_worker_sent < t.to_worker.size()) want |= EPOLLOUT;                     // bytes for the worker
  if (t.registered && want == t.watched) return;
  epoll_event ev{};
  ev.events = want;
  ev.data.ptr = &t;
  ::epoll_ctl(epoll_fd_, t.registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, t.relay_fd, &ev);
  t.registered = true;
  t.watched = want;
}

void JumpHost::watch_connection() {
  const int fd = connection_.fd();
  unsigned want = 0;
  switch (connection_.phase() == Connection::Phase::ready ? (sending(connection_.session()) ? util::Wait::read_write
                                                                                           : util::Wait::read)
                                                          : connection_.wait()) {
    case util::Wait::none: break;
    case util::Wait::read: want = EPOLLIN; break;
    case util::Wait::write: want = EPOLLOUT; break;
    case util::Wait::read_write: want = EPOLLIN | EPOLLOUT; break;
  }
  if (watched_connection_fd_ >= 0 && (watched_connection_fd_ != fd || want == 0)) {
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, watched_connection_fd_, nullptr);
    watched_connection_fd_ = -1;
  }
  if (fd < 0 || want == 0) return;
  if (watched_connection_fd_ == fd && watched_connection_events_ == want) return;
  epoll_event ev{};
  ev.events = want;
  ev.data.ptr = nullptr;
  if (::epoll_ctl(epoll_fd_, watched_connection_fd_ == fd ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &ev) != 0 &&
      errno == ENOENT)
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
  watched_connection_fd_ = fd;
  watched_connection_events_ = want;
}

std::string JumpHost::libssh2_error() const { return connection_.last_error(); }

// ---- JumpPool -------------------------------------------------------------------

JumpPool::JumpPool(const ConnectionSettings& settings) : own_settings_(settings), settings_(&settings) {}

JumpPool::~JumpPool() { clear(); }

void JumpPool::attach(util::Reactor* reactor) {
  for (auto& [key, hosts] : hosts_) {
    for (auto& h : hosts) {
      if (reactor_) reactor_->remove(*h);
      if (reactor) reactor->add(*h);
    }
  }
  reactor_ = reactor;
}

void JumpPool::lend(const ConnectionSettings& settings) { settings_ = &settings; }

void JumpPool::park() {
  attach(nullptr);
  settings_ = &own_settings_;
  close_unused();
  for (auto& [key, hosts] : hosts_)
    for (auto& h : hosts) h->park(own_settings_.reaper);
}

void JumpPool::tick(Clock::time_point now) {
  for (auto& [key, hosts] : hosts_) {
    for (auto& h : hosts) {
      h->advance(now);
      h->tick(now);
    }
  }
  close_unused();
}

void JumpPool::close_unused() {
  for (auto& [key, hosts] : hosts_) drop(hosts, [](const JumpHost& h) { return h.failed() || h.tunnels() == 0; });
  std::erase_if(hosts_, [](const auto& e) { return e.second.empty(); });
}

void JumpPool::clear() {
  attach(nullptr);
  hosts_.clear();
}

// Out of the pool (and the loop); a tunnel's transport may still hold it
// until its worker session closes.
void JumpPool::drop(Sessions& sessions, const std::function<bool(const JumpHost&)>& which) {
  std::erase_if(sessions, [&](const std::shared_ptr<JumpHost>& h) {
    if (!which(*h)) return false;
    if (reactor_) reactor_->remove(*h);
    return true;
  });
}

std::size_t JumpPool::sessions() const {
  std::size_t n = 0;
  for (const auto& [key, hosts] : hosts_) n += hosts.size();
  return n;
}

std::string JumpPool::name_of(const std::vector<Hop>& chain, std::size_t hops) {
  std::string key;
  for (std::size_t i = 0; i < hops && i < chain.size(); ++i) key += (key.empty() ? "" : " > ") + chain[i].name;
  return key;
}

TransportFactory JumpPool::route(std::vector<Hop> chain, std::string host, std::uint16_t port) {
  resume_chain(chain);
  return [this, chain = std::move(chain), host = std::move(host), port] {
    return pick(chain).tunnel_to(host, port);
  };
}

void JumpPool::resume_chain(const std::vector<Hop>& chain) {
  for (std::size_t hops = 1; hops <= chain.size(); ++hops) {
    const std::string key = name_of(chain, hops);
    for (auto& [k, hosts] : hosts_) {
      if (k != key) continue;
      std::vector<const JumpHost*> refused;
      for (auto& h : hosts)
        if (h->parked() && !h->resume(hop_endpoint(chain, hops), *settings_)) refused.push_back(h.get());
      for (const JumpHost* h : refused) spdlog::debug("jump host {}: kept session not used", h->name());
      drop(hosts, [&](const JumpHost& h) { return std::find(refused.begin(), refused.end(), &h) != refused.end(); });
    }
  }
}

Endpoint JumpPool::hop_endpoint(const std::vector<Hop>& chain, std::size_t hops) {
  const Hop& last = chain[hops - 1];
  Endpoint endpoint = last.endpoint;
  if (hops > 1) endpoint.via = route({chain.begin(), chain.begin() + hops - 1}, last.endpoint.host, last.endpoint.port);
  return endpoint;
}

JumpHost& JumpPool::pick(const std::vector<Hop>& chain) {
  const std::string key = name_of(chain, chain.size());
  auto it = std::find_if(hosts_.begin(), hosts_.end(), [&](const auto& e) { return e.first == key; });
  if (it == hosts_.end()) {
    hosts_.emplace_back(key, Sessions{});
    it = hosts_.end() - 1;
  }
  auto& sessions = it->second;
  // The least loaded session, unless all are busy opening channels and another may be made.
  JumpHost* best = nullptr;
  for (auto& h : sessions)
    if (!best || h->backlog() < best->backlog()) best = h.get();
  const bool busy = best && !best->failed() && best->backlog() > spread_after;
  if (best && (!busy || sessions.size() >= max_sessions)) return *best;
  sessions.push_back(
      std::make_shared<JumpHost>(key, hop_endpoint(chain, chain.size()), *settings_, chain.back().connect_timeout));
  JumpHost& made = *sessions.back();
  if (reactor_) reactor_->add(made);
  return made;
}

}  // namespace tpush::ssh
