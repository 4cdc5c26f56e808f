#include "tpush/ssh/connection.h"

#include <fcntl.h>
#include <libssh2.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include <spdlog/spdlog.h>

#include "tpush/ssh/exec_channel.h"
#include "tpush/ssh/last_error.h"
#include "tpush/ssh/library.h"
#include "tpush/ssh/session_memory.h"
#include "tpush/ssh/session_wait.h"
#include "tpush/ssh/way/name_lookup.h"
#include "tpush/ssh/wire.h"

namespace tpush::ssh {
namespace {

// "127.0.1.5 port 22", "fe80::1 port 2222": the address tried, as ssh names it.
std::string address_text(const addrinfo* ai) {
  char host[NI_MAXHOST], port[NI_MAXSERV];
  if (!ai || getnameinfo(ai->ai_addr, ai->ai_addrlen, host, sizeof host, port, sizeof port,
                         NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return {};
  return std::string(host) + " port " + port;
}

// "connect refused (127.0.1.5 port 22)": what happened, and where.
std::string connect_error_text(int err, const addrinfo* ai) {
  std::string text;
  switch (err) {
    case ECONNREFUSED: text = "connect refused"; break;
    case ECONNRESET: text = "connection lost (reset by the peer before SSH started)"; break;
    case EHOSTUNREACH:
    case ENETUNREACH: text = "no route to host"; break;
    case ETIMEDOUT: text = "connect timed out"; break;
    default: text = std::string("connect failed: ") + std::strerror(err);
  }
  const std::string where = address_text(ai);
  return where.empty() ? text : text + " (" + where + ")";
}

}  // namespace

// An agent channel the worker opened (libssh2 confirmed it already): kept for
// the job that serves it. Nothing else may run on the session in here.
void Connection::agent_callback(LIBSSH2_SESSION*, LIBSSH2_CHANNEL* channel, void** abstract) {
  static_cast<Connection*>(*abstract)->agent_channels_.push_back(channel);
}

long Connection::recv_callback(int fd, void* buf, std::size_t len, int flags, void** abstract) {
  auto* self = static_cast<Connection*>(*abstract);
  // Out of budget for this turn: report "nothing yet" so libssh2 returns to the
  // event loop. The socket stays readable, so we come back after the others
  // (and after the timers: a peer streaming endless junk before its banner
  // would otherwise keep libssh2's banner loop spinning forever).
  // Calls are counted too: a peer may send many short reads.
  if (len == 1 && self->phase_ == Phase::handshake && self->banner_pos_ < self->banner_line_.size()) {
    *static_cast<char*>(buf) = self->banner_line_[self->banner_pos_++];
    return 1;
  }
  if (self->recv_budget_ == 0 || self->recv_calls_left_ == 0 || self->recv_dry_) return -EAGAIN;
  --self->recv_calls_left_;
  ssize_t n;
  if (len == 1 && self->phase_ == Phase::handshake) {
    // libssh2 reads the server's banner (and any lines before it) one byte per
    // call: 40-odd recv and setsockopt calls per worker. Take the whole line
    // at once instead, never a byte past its newline, which belongs to libssh2.
    char peek[256];
    n = ::recv(fd, peek, std::min(sizeof peek, self->recv_budget_), flags | MSG_PEEK);
    if (n > 0) {
      const auto* newline = static_cast<const char*>(std::memchr(peek, '\n', static_cast<std::size_t>(n)));
      self->banner_line_.resize(newline ? static_cast<std::size_t>(newline - peek + 1) : static_cast<std::size_t>(n));
      self->banner_pos_ = 0;
      n = ::recv(fd, self->banner_line_.data(), self->banner_line_.size(), flags);
      if (n > 0) {
        self->banner_line_.resize(static_cast<std::size_t>(n));
        *static_cast<char*>(buf) = self->banner_line_[self->banner_pos_++];
      } else {
        self->banner_line_.clear();
      }
    }
  } else {
    n = ::recv(fd, buf, std::min(len, self->recv_budget_), flags);
  }
  if (n < 0) {
    if (errno == EAGAIN) self->recv_dry_ = true;
    return -errno;
  }
  if (n > 0) {
    self->recv_budget_ -= static_cast<std::size_t>(n);
    self->last_receive_ = self->settings_.now();
    if (!self->reached_ && self->transport_) self->transport_->answered();
    self->reached_ = true;  // through a transport, the first bytes say so
    self->greeted_ = true;
    // Without this, the kernel delays our ACKs and sshd's Nagle waits on them:
    // ~40 ms per round trip on loopback. QUICKACK is not sticky, so re-arm it.
    if (!self->transport_) {
      const int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one);
    }
  }
  return n > 0 && len == 1 ? 1 : n;
}

Connection::Connection(Endpoint endpoint, const ConnectionSettings& settings)
    : endpoint_(std::move(endpoint)),
      settings_(settings),
      identities_(endpoint_.identities ? *endpoint_.identities : settings_.credentials->all()),
      attempts_left_(std::max(1, endpoint_.connection_attempts) - 1) {}

Connection::~Connection() { abandon(); }

std::unique_ptr<Channel> Connection::open_channel(std::string command, Channel::Settings settings) {
  return std::make_unique<ExecChannel>(session_, std::move(command), settings);
}

bool Connection::sending() const { return session_ && ssh::sending(session_); }

std::string Connection::host_key() const {
  std::size_t len = 0;
  int type = 0;
  const char* blob = session_ ? libssh2_session_hostkey(session_, &len, &type) : nullptr;
  return blob ? std::string(blob, len) : std::string();
}

int Connection::fd() const { return lookup_ ? lookup_->fd() : fd_; }

util::Wait Connection::wait() const {
  if (phase_ == Phase::resolve) return lookup_ ? util::Wait::read : util::Wait::none;
  if (phase_ == Phase::connect) return util::Wait::write;
  if (!session_ || phase_ == Phase::failed) return util::Wait::none;
  return wait_;
}

void Connection::fail(std::string reason) {
  if (phase_ == Phase::failed) return;
  if (transport_) {  // the way there failed: that is the cause
    if (std::string cause = reached_ ? transport_->failure() : transport_->unanswered(); !cause.empty())
      reason = std::move(cause);
    else if (std::string said = transport_->notes(); !said.empty())
      reason += " (proxy said: " + said + ")";
  }
  phase_ = Phase::failed;
  failure_reason_ = std::move(reason);
  abandon();
}

std::string Connection::last_error() const {
  if (!session_) return "no session";
  const std::string message = ssh::last_error(session_);
  return message.empty() ? "unknown error" : message;
}

Session::Phase Connection::advance() {
  if (!last_tick_) last_tick_ = settings_.now();  // a stall before the first tick counts too
  // Each step says whether it moved on to the next phase (then we go on) or
  // stopped: it waits (wait_ says on what) or has nothing to do yet.
  for (bool moved = true; moved;) {
    switch (phase_) {
      case Phase::resolve: moved = resolve(); break;
      case Phase::connect: moved = finish_connect(); break;
      case Phase::handshake: moved = do_handshake(); break;
      case Phase::host_key: moved = check_host_key(); break;
      case Phase::auth: moved = do_auth(); break;
      case Phase::ready:
      case Phase::failed: return phase_;
    }
  }
  return phase_;
}

// An address literal is parsed here; a name goes to a NameLookup, and
// advance() comes back when its fd is readable.
bool Connection::resolve() {
  if (retry_at_) return false;  // the next attempt waits for its time (tick)
  if (endpoint_.via) return open_transport();
  int rc;
  std::unique_ptr<NameLookup> finished;  // its eventfd is closed after the socket exists
  if (lookup_) {
    if (!lookup_->done()) return false;
    rc = lookup_->take(&addresses_);
    finished = std::move(lookup_);
  } else {
    addrinfo hints{};
    hints.ai_family = endpoint_.address_family;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV | AI_NUMERICHOST;
    const std::string port = std::to_string(endpoint_.port);
    rc = getaddrinfo(endpoint_.host.c_str(), port.c_str(), &hints, &addresses_);
    if (rc == EAI_NONAME) {  // not an address literal: ask the resolver, off the loop
      hints.ai_flags = AI_NUMERICSERV | AI_ADDRCONFIG;
      lookup_ = std::make_unique<NameLookup>(endpoint_.host, port, hints);
      return resolve();
    }
  }
  if (rc != 0) {
    fail(std::string("cannot resolve host (") + gai_strerror(rc) + ")");
    return true;
  }
  next_address_ = addresses_;
  return start_connect() != Attempt::retry_later;
}

// A jump host or a proxy command carries the session: its fd is ready at once,
// and SSH starts on it (what we write waits until the far end is reached).
bool Connection::open_transport() {
  transport_ = endpoint_.via();
  const int fd = transport_->open();
  if (fd < 0) {
    fail(transport_->failure());
    return true;
  }
  fd_ = fd;
  ::fcntl(fd_, F_SETFL, ::fcntl(fd_, F_GETFL) | O_NONBLOCK);
  start_session();
  return true;
}

// The event loop watches fds by number, and closing an fd drops its watch
// silently: were the next socket to get the number of the one it replaces,
// the loop would take it for the old one and never watch it. So the fd being
// replaced (a failed attempt's socket, or the name lookup's eventfd, which
// resolve() keeps open until here) is closed only once the new one exists.
Connection::Attempt Connection::start_connect() {
  const int previous = std::exchange(fd_, -1);
  struct ClosePrevious {
    int fd;
    ~ClosePrevious() {
      if (fd >= 0) ::close(fd);
    }
  } close_previous{previous};
  while (next_address_) {
    const addrinfo* ai = next_address_;
    next_address_ = ai->ai_next;
    fd_ = ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd_ < 0) {
      connect_error_ = std::string("cannot create socket: ") + std::strerror(errno);
      continue;
    }
    const int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    // Unacknowledged data older than the alive window means the peer is gone
    // (a partition): the kernel then fails the socket.
    const unsigned user_timeout_ms =
        static_cast<unsigned>(endpoint_.alive_interval.count() * endpoint_.alive_count * 1000);
    if (user_timeout_ms > 0)
      setsockopt(fd_, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout_ms, sizeof user_timeout_ms);
    if (::connect(fd_, ai->ai_addr, ai->ai_addrlen) == 0 || errno == EINPROGRESS) {
      phase_ = Phase::connect;
      connecting_to_ = ai;
      return Attempt::connecting;
    }
    connect_error_ = connect_error_text(errno, ai);
    close_socket();
  }
  if (attempts_left_ > 0 && addresses_) {
    retry_connect_later();
    return Attempt::retry_later;
  }
  fail(connect_error_.empty() ? "connect failed" : connect_error_);
  return Attempt::failed;
}

// ConnectionAttempts: every address failed; try them all again in a second
// (tick() restarts), as ssh does. The connect deadline still runs.
void Connection::retry_connect_later() {
  --attempts_left_;
  close_socket();
  next_address_ = nullptr;
  phase_ = Phase::resolve;
  retry_at_ = settings_.now() + std::chrono::seconds(1);
}

// SO_ERROR reads 0 while the connect is still under way: only a writable
// socket has an answer (connected, or the error). advance() comes here right
// after connect() too, so a SYN nobody answers waits here, in this phase.
bool Connection::finish_connect() {
  pollfd p{fd_, POLLOUT, 0};
  if (::poll(&p, 1, 0) == 0) return false;  // not yet: the event loop waits for it
  int err = 0;
  socklen_t len = sizeof err;
  if (getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  if (err == EINPROGRESS) return false;  // spurious wake-up
  if (err != 0) {
    connect_error_ = connect_error_text(err, connecting_to_);
    // The next address (this socket is closed once it exists): the event
    // loop waits for its connect. Or all of them again later, or fail.
    return start_connect() != Attempt::connecting;
  }
  freeaddrinfo(addresses_);
  addresses_ = next_address_ = nullptr;
  connecting_to_ = nullptr;
  reached_ = true;
  start_session();
  return true;
}

void Connection::start_session() {
  session_ = libssh2_session_init_ex(&session_memory::allocate, &session_memory::release,
                                     &session_memory::reallocate, this);
  if (!session_) {
    fail("cannot create an SSH session (out of memory?)");
    return;
  }
  libssh2_session_set_blocking(session_, 0);
  libssh2_session_callback_set2(session_, LIBSSH2_CALLBACK_RECV,
                                reinterpret_cast<libssh2_cb_generic*>(&Connection::recv_callback));
  // Set on every session: without it, libssh2 1.11.1 refuses an agent channel
  // with a malformed message and sshd drops the connection.
  libssh2_session_callback_set2(session_, LIBSSH2_CALLBACK_AUTHAGENT,
                                reinterpret_cast<libssh2_cb_generic*>(&Connection::agent_callback));
  const auto& prefs = method_prefs();
  libssh2_session_method_pref(session_, LIBSSH2_METHOD_KEX, prefs.kex.c_str());
  libssh2_session_method_pref(session_, LIBSSH2_METHOD_CRYPT_CS, prefs.ciphers.c_str());
  libssh2_session_method_pref(session_, LIBSSH2_METHOD_CRYPT_SC, prefs.ciphers.c_str());
  libssh2_session_method_pref(session_, LIBSSH2_METHOD_MAC_CS, prefs.macs.c_str());
  libssh2_session_method_pref(session_, LIBSSH2_METHOD_MAC_SC, prefs.macs.c_str());
  const HostKeyIdentity id{endpoint_.host, endpoint_.port, endpoint_.host_key_aliases,
                           &endpoint_.pinned_host_key};
  const std::string hostkeys = host_key_prefs(host_keys().known_types(id), host_keys().wants_certificate(id));
  libssh2_session_method_pref(session_, LIBSSH2_METHOD_HOSTKEY, hostkeys.c_str());
  last_receive_ = settings_.now();
  phase_ = Phase::handshake;
}

bool Connection::do_handshake() {
  const int rc = libssh2_session_handshake(session_, fd_);
  if (rc == LIBSSH2_ERROR_EAGAIN) {
    wait_ = blocked_direction(session_);
    return false;
  }
  if (rc != 0) {
    const bool closed = rc == LIBSSH2_ERROR_SOCKET_DISCONNECT || rc == LIBSSH2_ERROR_SOCKET_RECV;
    fail("protocol error (SSH handshake: " + last_error() +
                                   (closed ? "; the server closed the connection)" : ")"));
    return true;
  }
  phase_ = Phase::host_key;
  return true;
}

HostKeyVerdict Connection::verify_host_key() {
  std::size_t len = 0;
  int type = 0;
  const char* blob = libssh2_session_hostkey(session_, &len, &type);
  if (!blob) return {false, "protocol error (the server sent no host key)"};
  std::string key_type = wire::blob_type({blob, len});
  const HostKey key{key_type.empty() ? "unknown" : std::move(key_type), std::string(blob, len)};
  const HostKeyIdentity id{endpoint_.host, endpoint_.port, endpoint_.host_key_aliases,
                           &endpoint_.pinned_host_key};
  return host_keys().verify(id, key);
}

bool Connection::check_host_key() {
  auto verdict = verify_host_key();
  warning_ = std::move(verdict.warning);
  if (!verdict.accepted) {
    fail(verdict.reason);
    return true;
  }
  phase_ = Phase::auth;
  return true;
}

bool Connection::do_auth() {
  if (!logging_in_) logging_in_.emplace(identities_, endpoint_.user, settings_.home);
  switch (logging_in_->advance(session_)) {
    case Login::Step::waiting:
      wait_ = blocked_direction(session_);
      return false;
    case Login::Step::accepted:
      login_ = logging_in_->identity();
      logging_in_.reset();
      libssh2_keepalive_config(session_, 1, static_cast<unsigned>(endpoint_.alive_interval.count()));
      phase_ = Phase::ready;
      wait_ = util::Wait::none;
      return true;
    case Login::Step::refused:
      fail(logging_in_->refusal());
      logging_in_.reset();
      return true;
  }
  return false;
}

std::vector<LIBSSH2_CHANNEL*> Connection::take_agent_channels() { return std::exchange(agent_channels_, {}); }

void Connection::note_tick(Clock::time_point now) {
  constexpr auto late = std::chrono::seconds(1);  // ten 100 ms ticks missed
  constexpr auto tick = std::chrono::milliseconds(100);
  if (last_tick_ && now - *last_tick_ >= late) {
    resumed_ = now;
    stalled_ += now - *last_tick_ - tick;
  }
  last_tick_ = now;
}

void Connection::tick(Clock::time_point now) {
  if (retry_at_ && now >= *retry_at_ && phase_ == Phase::resolve) {
    retry_at_.reset();
    next_address_ = addresses_;
    start_connect();
    return;
  }
  if (phase_ != Phase::ready || !session_) return;
  if (!ready_since_) ready_since_ = now;
  if (!trimmed_ && now - *ready_since_ >= trim_after) {
    trimmed_ = true;
    session_memory::drop_zero_pages(session_);
  }
  // A packet half-written must be finished before another may be sent.
  if (ssh::sending(session_)) return;
  int next = 0;
  libssh2_keepalive_send(session_, &next);
}

void Connection::close_socket() {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
}

void Connection::park(util::ChildReaper* reaper) {
  if (transport_) transport_->outlive_run(reaper);
  endpoint_.identities.reset();
  endpoint_.host_keys = nullptr;
  identities_ = {};
  // The key it logged in with belongs to the run: only its public half stays.
  login_ = LoginIdentity{login_.blob, nullptr, std::nullopt, login_.name};
  ConnectionSettings idle;
  idle.home = settings_.home;
  idle.now = settings_.now;
  settings_ = std::move(idle);
  last_tick_.reset();
  resumed_.reset();
  stalled_ = {};
}

bool Connection::resume(Endpoint endpoint, const ConnectionSettings& settings) {
  endpoint_ = std::move(endpoint);
  settings_ = settings;
  if (transport_) transport_->outlive_run(settings_.reaper);
  warning_.clear();
  if (phase_ != Phase::ready || !session_) return false;
  auto verdict = verify_host_key();
  if (!verdict.accepted) {
    failure_reason_ = std::move(verdict.reason);
    return false;
  }
  warning_ = std::move(verdict.warning);
  libssh2_keepalive_config(session_, 1, static_cast<unsigned>(endpoint_.alive_interval.count()));
  // The identity it logged in with, as this run holds it: a key it decoded,
  // else the agent it would ask.
  identities_ = endpoint_.identities ? *endpoint_.identities : settings_.credentials->all();
  // (Neither: it stays as park() left it, public half only.)
  if (LoginIdentity found = identity_of(identities_, login_.blob, settings_.home); found.key || found.agent_socket) login_ = std::move(found);
  return true;
}

bool Connection::peer_closed() const {
  if (fd_ < 0 || phase_ != Phase::ready) return true;
  pollfd p{fd_, POLLRDHUP, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

void Connection::abandon() {
  logging_in_.reset();  // its agent connection is the session's
  if (session_) {
    if (fd_ >= 0) {
      libssh2_session_disconnect(session_, "tpush closing");  // best effort, may EAGAIN
      ::shutdown(fd_, SHUT_RDWR);  // any further libssh2 I/O fails at once
    }
    libssh2_session_free(session_);
    session_ = nullptr;
  }
  lookup_.reset();
  close_socket();
  if (transport_) transport_->close();
  if (addresses_) {
    freeaddrinfo(addresses_);
    addresses_ = next_address_ = nullptr;
    connecting_to_ = nullptr;
  }
}

}  // namespace tpush::ssh
