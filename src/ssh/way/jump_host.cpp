#include "tpush/ssh/way/jump_host.h"

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
#include "tpush/ssh/way/jump_pool.h"

namespace tpush::ssh {
namespace {

std::array<char, 64 * 1024> scratch;  // one read at a time, in the one event-loop thread

}  // namespace

JumpHost::JumpHost(std::string name, Endpoint endpoint, const ConnectionSettings& settings,
                   std::chrono::seconds connect_timeout, JumpLane& lane)
    : name_(std::move(name)),
      lane_(lane),
      watch_(connect_timeout, endpoint.alive_interval, endpoint.alive_count),
      connection_(open_session(std::move(endpoint), settings)),
      now_(settings.now),
      epoll_fd_(::epoll_create1(EPOLL_CLOEXEC)) {}

JumpHost::~JumpHost() {
  if (channels_opened_ > 0 && open_pace_)
    spdlog::debug("jump host {}: carried {} worker(s), one channel opened every {:.1f} ms", name_,
                  channels_opened_, open_pace_->count() * 1000);
  for (auto& t : tunnels_)
    if (t->relay_fd >= 0) ::close(t->relay_fd);
  connection_->abandon();  // frees every channel with the session
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
}

void JumpHost::start() {
  if (started_) return;
  started_ = true;
  const Clock::time_point now = now_();
  watch_.start(now);
  spdlog::debug("jump host {}: connecting", name_);
  drive(now);
}

std::optional<Clock::duration> JumpHost::open_in_flight(Clock::time_point now) const {
  if (!open_started_) return std::nullopt;
  return now - *open_started_;
}

void JumpHost::park(util::ChildReaper* reaper) {
  parked_ = true;
  connection_->park(reaper);
}

bool JumpHost::resume(Endpoint endpoint, const ConnectionSettings& settings) {
  parked_ = false;
  watch_ = SessionWatch(watch_.connect_timeout(), endpoint.alive_interval, endpoint.alive_count);
  now_ = settings.now;
  watch_.heard(now_());
  if (connection_->resume(std::move(endpoint), settings)) return true;
  fail_all("jump host " + name_ + ": " + connection_->failure_reason());
  return false;
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
  if (!parked_) connection_->note_tick(now);
  note_busy(now);
  if (!ready()) {
    if (const auto expired = watch_.connect_expired(now, *connection_))
      return fail_all("jump host " + name_ + ": " + *expired);
    connection_->tick(now);  // a connect attempt due again
    return drive(now);
  }
  if (!parked_)
    if (const auto silent = watch_.silence_expired(now, *connection_))
      return fail_all("jump host " + name_ + ": connection lost (" + *silent + ")");
  if (!pending_) connection_->tick(now);  // keepalive, never over a half-sent packet
  drive(now);
  if (!parked_) lane_.balance(now);
}

// The share of the time since the last tick that a channel open was in
// flight, and whether the connection is blocked sending, smoothed over about
// a second.
void JumpHost::note_busy(Clock::time_point now) {
  const Clock::duration busy = busy_total_ + open_in_flight(now).value_or(Clock::duration{});
  if (last_busy_tick_ && now > *last_busy_tick_) {
    const double share = std::chrono::duration<double>(busy - busy_at_last_tick_) / (now - *last_busy_tick_);
    busy_share_ = 0.8 * busy_share_ + 0.2 * std::min(1.0, share);
  }
  last_busy_tick_ = now;
  busy_at_last_tick_ = busy;
  const bool blocked = ready() && (pending_ != nullptr || connection_->sending());
  blocked_share_ = 0.8 * blocked_share_ + (blocked ? 0.2 : 0.0);
}

void JumpHost::drive(Clock::time_point now) {
  if (failed() || !started_) return;
  connection_->new_turn();
  if (!ready()) {
    const bool logging_in = connection_->phase() == Session::Phase::auth;
    if (connection_->advance() == Session::Phase::failed) {
      if (logging_in) login_refused_ = connection_->failure_reason();
      return fail_all("jump host " + name_ + ": " + connection_->failure_reason());
    }
    if (!ready()) return watch_connection();
    spdlog::debug("jump host {}: connected", name_);
    if (!connection_->warning().empty()) spdlog::warn("{}", connection_->warning());
  }
  if (finish_pending()) {
    open_channels(now);
    for (std::size_t i = 0; i < tunnels_.size() && !pending_ && !failed(); ++i) pump(*tunnels_[i]);
  }
  if (failed()) return;
  forget_closed();
  watch_connection();
}

// Records a half-sent packet: libssh2 then refuses every other send until
// this same call is made again.
bool JumpHost::blocked(int rc, JumpTunnel* t, Op op) {
  if (rc != LIBSSH2_ERROR_EAGAIN || !connection_->sending()) return false;
  pending_ = t;
  pending_op_ = op;
  return true;
}

bool JumpHost::finish_pending() {
  if (!pending_) return true;
  JumpTunnel& t = *pending_;
  const Op op = pending_op_;
  pending_ = nullptr;
  pending_op_ = Op::none;
  switch (op) {  // exactly the call that was cut short
    case Op::open: open_channels(now_()); break;
    case Op::write: write_channel(t); break;
    case Op::read: read_channel(t); break;
    case Op::close: close_channel(t); break;
    case Op::none: break;
  }
  return pending_ == nullptr;
}

// One open at a time per session (libssh2 keeps its progress in the
// session): the next tunnel of the lane when the last one is answered.
void JumpHost::open_channels(Clock::time_point now) {
  while (!pending_ && !failed()) {
    if (!opening_) {
      opening_ = lane_.next_for(*this);
      if (!opening_) return;
      opening_->state = JumpTunnel::State::opening;
      open_started_ = now;
    }
    JumpTunnel& t = *opening_;
    int rc = 0;
    t.channel = connection_->open_direct(t.host, t.port, &rc);
    if (t.channel) {
      channel_opened(now);
      continue;
    }
    if (rc == LIBSSH2_ERROR_EAGAIN) {
      blocked(rc, &t, Op::open);
      return;  // waiting for the server's answer: the same call again then
    }
    if (is_hangup(rc)) return fail_all("jump host " + name_ + ": connection lost (" + libssh2_error() + ")");
    busy_total_ += now - *open_started_;
    open_started_.reset();
    lane_.open_failed(*this, std::move(opening_), libssh2_error());
  }
}

void JumpHost::channel_opened(Clock::time_point now) {
  std::shared_ptr<JumpTunnel> t = std::move(opening_);
  const Clock::duration took = now - *open_started_;
  busy_total_ += took;
  open_started_.reset();
  const std::chrono::duration<double> seconds = took;
  open_pace_ = open_pace_ ? *open_pace_ * 0.8 + seconds * 0.2 : seconds;
  fastest_open_ = std::min(fastest_open_.value_or(seconds), seconds);
  ++channels_opened_;
  t->state = t->worker_eof ? JumpTunnel::State::closing : JumpTunnel::State::open;
  t->carrier = weak_from_this();
  tunnels_.push_back(t);
  lane_.opened(*this, *t);
  pump(*t);
}

// Moves what there is in both directions for one tunnel, until nothing moves.
void JumpHost::pump(JumpTunnel& t) {
  for (bool moved = true; moved && t.state == JumpTunnel::State::open && !pending_ && !failed();) {
    moved = flush_to_worker(t);
    moved = read_channel(t) || moved;
    moved = read_worker(t) || moved;
    moved = write_channel(t) || moved;
  }
  if (t.state == JumpTunnel::State::closing && !pending_ && !failed()) close_channel(t);
  watch_relay(t);
}

bool JumpHost::flush_to_worker(JumpTunnel& t) {
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
      t.state = JumpTunnel::State::closing;
      return false;
    }
  }
  t.to_worker.clear();
  t.to_worker_sent = 0;
  return moved;
}

bool JumpHost::read_channel(JumpTunnel& t) {
  if (t.state != JumpTunnel::State::open || !t.to_worker.empty() || t.channel_eof) return false;
  const long rc = t.channel->read(scratch.data(), scratch.size());
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
  if (rc == 0 && !t.channel->eof()) return false;
  // The worker's server closed its side (or the channel failed): the worker reads EOF.
  t.channel_eof = true;
  if (t.relay_fd >= 0) ::shutdown(t.relay_fd, SHUT_WR);
  return true;
}

bool JumpHost::read_worker(JumpTunnel& t) {
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
  t.state = JumpTunnel::State::closing;
  return false;
}

bool JumpHost::write_channel(JumpTunnel& t) {
  bool moved = false;
  while (t.channel && t.to_channel_sent < t.to_channel.size()) {
    const long rc = t.channel->write(t.to_channel.data() + t.to_channel_sent, t.to_channel.size() - t.to_channel_sent);
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

void JumpHost::close_channel(JumpTunnel& t) {
  if (t.relay_fd >= 0) {
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, t.relay_fd, nullptr);
    ::close(t.relay_fd);
    t.relay_fd = -1;
  }
  if (t.channel) {
    const int rc = t.channel->close();
    if (rc == LIBSSH2_ERROR_EAGAIN) {
      blocked(rc, &t, Op::close);
      return;  // sent, or waiting for the server's close: again on the next turn
    }
    t.channel.reset();
  }
  t.state = JumpTunnel::State::done;
}

void JumpHost::fail_tunnel(JumpTunnel& t, std::string why) {
  spdlog::debug("{}", why);
  if (t.failure.empty()) t.failure = std::move(why);
  t.worker_eof = true;
  if (t.relay_fd >= 0) {
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, t.relay_fd, nullptr);
    ::close(t.relay_fd);  // the worker's session reads EOF and fails with t.failure
    t.relay_fd = -1;
  }
  t.state = t.channel ? JumpTunnel::State::closing : JumpTunnel::State::done;
}

// The session is gone: the tunnels it carried fail with it; the one whose
// open was in flight carried nothing, so its lane may send it another way.
void JumpHost::fail_all(std::string why) {
  spdlog::debug("{}", why);
  failure_ = std::move(why);
  pending_ = nullptr;
  std::shared_ptr<JumpTunnel> unopened = std::move(opening_);
  if (unopened) unopened->channel.reset();
  open_started_.reset();
  for (auto& t : tunnels_) {
    if (t->channel) t->channel->release();  // freed with the session
    t->channel.reset();
    fail_tunnel(*t, failure_);
    t->state = JumpTunnel::State::done;
  }
  connection_->abandon();
  watched_connection_fd_ = -1;
  forget_closed();
  lane_.session_failed(*this, std::move(unopened));
}

void JumpHost::forget_closed() {
  std::erase_if(tunnels_, [this](const std::shared_ptr<JumpTunnel>& t) {
    if (t->state != JumpTunnel::State::done || t.get() == pending_) return false;
    t->carrier.reset();
    return true;
  });
}

// Registered from the start, so a hang-up is always seen; interest follows the buffers.
void JumpHost::watch_relay(JumpTunnel& t) {
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
  const int fd = connection_->fd();
  unsigned want = 0;
  switch (connection_->phase() == Session::Phase::ready ? (connection_->sending() ? util::Wait::read_write
                                                                                           : util::Wait::read)
                                                          : connection_->wait()) {
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

std::string JumpHost::libssh2_error() const { return connection_->last_error(); }


}  // namespace tpush::ssh
