#include "tpush/fanout/forward_job.h"

#include <fcntl.h>
#include <libssh2.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "tpush/ssh/hangup.h"
#include "tpush/ssh/last_error.h"
#include "tpush/ssh/session_wait.h"

namespace tpush::fanout {
namespace {

// What a connection holds in each direction before it stops reading that way:
// the slower side sets the pace.
constexpr std::size_t kBuffer = 256 * 1024;

std::string libssh2_message(LIBSSH2_SESSION* session) {
  const std::string message = ssh::last_error(session);
  return message.empty() ? "unknown error" : message;
}

}  // namespace

class ForwardJob::Listener final : public util::Pollable {
 public:
  Listener(ForwardTarget what, ForwardJob& job) : target(std::move(what)), job_(job) {}
  ~Listener() override { ::close(target.listen_fd); }
  int fd() const override { return target.listen_fd; }
  util::Wait wait() const override { return util::Wait::read; }
  void advance(Clock::time_point) override {
    job_.accept_from(*this);
    job_.pump();
  }
  void tick(Clock::time_point) override {}

  const ForwardTarget target;

 private:
  ForwardJob& job_;
};

class ForwardJob::Connection final : public util::Pollable {
 public:
  enum class State { waiting, opening, open, closing, done };

  Connection(int fd, const ForwardTarget& to, ForwardJob& job) : target(to), fd_(fd), job_(job) {}
  ~Connection() override { ::close(fd_); }
  int fd() const override { return state == State::done ? -1 : fd_; }
  // Nothing is read before the channel is open: what the client sent first
  // waits in the socket (watching it then would wake the loop for nothing).
  util::Wait wait() const override {
    const bool read = state == State::open && !local_eof && to_remote.size() < kBuffer;
    const bool write = !to_local.empty();
    return read && write ? util::Wait::read_write : read ? util::Wait::read : write ? util::Wait::write : util::Wait::none;
  }
  void advance(Clock::time_point) override { job_.pump(); }
  void tick(Clock::time_point) override {}

  // Local bytes in (until EOF or the buffer is full); false when the local side failed.
  bool read_local() {
    char buf[64 * 1024];
    while (!local_eof && to_remote.size() < kBuffer) {
      const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
      if (n > 0) {
        to_remote.append(buf, static_cast<std::size_t>(n));
      } else if (n == 0) {
        local_eof = true;
      } else if (errno == EAGAIN || errno == EINTR) {
        return true;
      } else {
        return false;
      }
    }
    return true;
  }

  // Remote bytes out; false when the local side is gone.
  bool write_local() {
    while (!to_local.empty()) {
      const ssize_t n = ::send(fd_, to_local.data(), to_local.size(), MSG_NOSIGNAL);
      if (n > 0) {
        to_local.erase(0, static_cast<std::size_t>(n));
      } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
        return true;
      } else {
        return false;
      }
    }
    if (remote_eof && !shut_) {
      ::shutdown(fd_, SHUT_WR);  // the far side ended: so does what the client reads
      shut_ = true;
    }
    return true;
  }

  const ForwardTarget& target;
  State state = State::waiting;
  LIBSSH2_CHANNEL* channel = nullptr;
  std::string to_remote, to_local;
  bool local_eof = false, remote_eof = false, eof_sent = false;

 private:
  int fd_;
  bool shut_ = false;
  ForwardJob& job_;
};

// The session's socket, watched for writing while libssh2 has a packet half
// sent: a dup, since the job's own watch on it is the scheduler's.
class ForwardJob::SessionWrites final : public util::Pollable {
 public:
  SessionWrites(int fd, ForwardJob& job) : fd_(::fcntl(fd, F_DUPFD_CLOEXEC, 3)), job_(job) {}
  ~SessionWrites() override {
    if (fd_ >= 0) ::close(fd_);
  }
  int fd() const override { return fd_; }
  util::Wait wait() const override {
    return job_.working() && job_.ssh_session().sending() ? util::Wait::write : util::Wait::none;
  }
  void advance(Clock::time_point) override { job_.pump(); }
  void tick(Clock::time_point) override {}

 private:
  int fd_;
  ForwardJob& job_;
};

ForwardJob::ForwardJob(std::size_t index, ssh::Endpoint endpoint, const ssh::ConnectionSettings& settings,
                       Deadlines deadlines, std::vector<ForwardTarget> targets, std::string label,
                       util::Reactor& reactor, OutputSink& out)
    : SessionJob(index, std::move(endpoint), settings, deadlines),
      label_(std::move(label)),
      reactor_(reactor),
      out_(out) {
  for (auto& t : targets) listeners_.push_back(std::make_unique<Listener>(std::move(t), *this));
}

ForwardJob::~ForwardJob() { unregister_all(); }

void ForwardJob::register_all() {
  registered_ = true;
  for (auto& l : listeners_) reactor_.add(*l);
  reactor_.add(*writes_);
}

void ForwardJob::unregister_all() {
  if (!registered_) return;
  registered_ = false;
  for (auto& l : listeners_) reactor_.remove(*l);
  for (auto& c : connections_) reactor_.remove(*c);
  if (writes_) reactor_.remove(*writes_);
}

void ForwardJob::start_work() {
  out_.connected(index_);
  writes_ = std::make_unique<SessionWrites>(ssh_session().fd(), *this);
  for (const auto& l : listeners_)
    out_.notice("tpush: forwarding " + l->target.text + " -> " + label_ + " " + l->target.host + ":" +
                std::to_string(l->target.port) + "\n");
  register_all();
}

void ForwardJob::advance_work() { pump(); }

util::Wait ForwardJob::work_wait() const {
  return ssh_session().sending() ? util::Wait::read_write : util::Wait::read;
}

void ForwardJob::forward_interrupt() {
  if (finished()) return;
  if (!working()) return interrupt();
  finish(Outcome::ok, "forward stopped");
}

void ForwardJob::release_work() {
  unregister_all();
  for (auto& c : connections_) c->channel = nullptr;  // freed with the session
  connections_.clear();
  listeners_.clear();
}

void ForwardJob::accept_from(Listener& listener) {
  if (finished() || !working()) return;
  for (;;) {
    const int fd = ::accept4(listener.target.listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN, or a connection that went away before we took it
    connections_.push_back(std::make_unique<Connection>(fd, listener.target, *this));
    reactor_.add(*connections_.back());
  }
}

// Channels open one at a time: libssh2 keeps one open in progress per session,
// and it must be asked again with the same arguments until it answers.
bool ForwardJob::open_next() {
  for (auto& c : connections_) {
    if (c->state != Connection::State::waiting && c->state != Connection::State::opening) continue;
    c->state = Connection::State::opening;
    c->channel = libssh2_channel_direct_tcpip_ex(session(), c->target.host.c_str(), c->target.port, "127.0.0.1", 0);
    if (c->channel) {
      spdlog::debug("{}: forward {}: a channel to {}:{} opened", label_, c->target.text, c->target.host, c->target.port);
      c->state = Connection::State::open;
      continue;
    }
    const int rc = libssh2_session_last_errno(session());
    spdlog::trace("{}: forward {}: opening a channel: {}", label_, c->target.text, rc);
    if (rc == LIBSSH2_ERROR_EAGAIN) return false;
    if (ssh::is_hangup(rc)) {
      finish(Outcome::lost, lost_reason(libssh2_message(session())));
      return false;
    }
    close(*c, "the worker could not connect to " + c->target.host + ":" + std::to_string(c->target.port) + " (" +
                  libssh2_message(session()) + ")");
  }
  return true;
}

// One open connection's bytes, both ways, as far as they go.
bool ForwardJob::move(Connection& c) {
  if (!c.read_local()) c.local_eof = true;
  while (!c.to_remote.empty()) {
    const ssize_t n = libssh2_channel_write(c.channel, c.to_remote.data(), c.to_remote.size());
    if (n == LIBSSH2_ERROR_EAGAIN) {
      if (ssh_session().sending()) {
        half_sent_ = &c;
        return false;
      }
      break;  // the channel's window is closed: its adjust comes as a packet to read
    }
    if (n == 0) break;
    if (n < 0) {
      if (ssh::is_hangup(static_cast<int>(n))) return finish(Outcome::lost, lost_reason(libssh2_message(session()))), false;
      c.to_remote.clear();
      c.local_eof = true;  // the channel refuses more: stop reading that side
      break;
    }
    c.to_remote.erase(0, static_cast<std::size_t>(n));
  }
  half_sent_ = nullptr;
  if (c.local_eof && c.to_remote.empty() && !c.eof_sent) {
    const int rc = libssh2_channel_send_eof(c.channel);
    if (rc == LIBSSH2_ERROR_EAGAIN) return !ssh_session().sending();
    c.eof_sent = true;
  }
  // libssh2 takes every packet waiting on the socket into its own queue while
  // it reads any channel: a pass that read something must be followed by
  // another (here, and in pump() for the other channels) before the loop may
  // wait on the socket again.
  char buf[64 * 1024];
  for (;;) {
    bool got = false;
    while (!c.remote_eof && c.to_local.size() < kBuffer) {
      const ssize_t n = libssh2_channel_read(c.channel, buf, sizeof buf);
      if (n > 0) {
        c.to_local.append(buf, static_cast<std::size_t>(n));
        got = moved_ = true;
        continue;
      }
      if (n == LIBSSH2_ERROR_EAGAIN) break;
      if (n == 0 && !libssh2_channel_eof(c.channel)) break;
      c.remote_eof = true;
    }
    const std::size_t held = c.to_local.size();
    if (!c.write_local()) {
      c.to_local.clear();
      c.local_eof = c.remote_eof = true;
      break;
    }
    if (!got || c.to_local.size() == held) break;  // nothing came, or the local side is full
  }
  if (c.remote_eof && c.eof_sent && c.to_local.empty()) c.state = Connection::State::closing;
  return true;
}

void ForwardJob::close(Connection& c, const std::string& refusal) {
  if (!refusal.empty()) out_.notice("tpush: " + label_ + ": forward " + c.target.text + ": " + refusal + "\n");
  c.state = Connection::State::done;
}

void ForwardJob::pump() {
  if (finished() || !working()) return;
  // Called for a local socket too: libssh2 may read the session's socket as
  // far as a turn of the loop lets it.
  ssh_session().new_turn();
  if (half_sent_ && !move(*half_sent_)) return;
  if (!open_next() || finished()) return;
  // Passes until one moves nothing (see move()), a few at most per turn.
  for (int pass = 0; pass < 8; ++pass) {
    moved_ = false;
    for (auto& c : connections_) {
      if (c->state == Connection::State::open && !move(*c)) return;
      if (finished()) return;
      if (c->state == Connection::State::closing) {
        const int rc = libssh2_channel_close(c->channel);
        if (rc == LIBSSH2_ERROR_EAGAIN) return;
        libssh2_channel_free(c->channel);
        c->channel = nullptr;
        c->state = Connection::State::done;
      }
    }
    if (!moved_) break;
  }
  for (auto it = connections_.begin(); it != connections_.end();) {
    if ((*it)->state != Connection::State::done) {
      ++it;
      continue;
    }
    reactor_.remove(**it);
    it = connections_.erase(it);
  }
}

}  // namespace tpush::fanout
