// One worker's SSH session as the jobs see it: where it goes (Endpoint), what
// every session of a run shares (ConnectionSettings), what a job uses of it
// (Session) and how a job gets one (open_session). The real session is
// ssh::Connection (connection.h); unit tests hand jobs a fake through
// ConnectionSettings::make_session and drive them with their own clock.
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tpush/ssh/channel.h"
#include "tpush/ssh/identity/credentials.h"
#include "tpush/ssh/identity/host_key_policy.h"
#include "tpush/ssh/way/direct_channel.h"
#include "tpush/ssh/way/transport.h"
#include "tpush/util/wait.h"

typedef struct _LIBSSH2_SESSION LIBSSH2_SESSION;
typedef struct _LIBSSH2_CHANNEL LIBSSH2_CHANNEL;

namespace tpush::util {
class ChildReaper;
}

namespace tpush::ssh {

class KeptSessions;
class Session;
struct ConnectionSettings;

using Clock = std::chrono::steady_clock;
// The clock a run reads (tests pass their own).
using Now = std::function<Clock::time_point()>;

// tpush's keepalive period when neither --alive-interval, ssh_config's
// ServerAliveInterval nor tpush's config file names one, and the silent
// periods after which a session is lost (ServerAliveCountMax's default).
inline constexpr std::chrono::seconds kDefaultAliveInterval{5};
inline constexpr int kDefaultAliveCount = 3;

// Where and how to reach one worker (or jump host), settled before the run
// from tpush's flags, the host list, ssh_config and tpush's defaults.
struct Endpoint {
  std::string host;
  uint16_t port = 22;
  std::string user;
  std::vector<std::string> host_key_aliases;
  std::optional<std::string> pinned_host_key;
  // Set when the worker is reached through a jump host or a proxy command
  // instead of a TCP connection of our own.
  TransportFactory via;
  // What `via` is, for keeping the session between runs (kept_sessions.h):
  // "proxy command LINE"; empty for a jump host's channel, which belongs to
  // the run that opened it.
  std::string route;
  // What to authenticate with; nullopt: everything the settings' credentials hold.
  std::optional<Identities> identities;
  HostKeyPolicy* host_keys = nullptr;  // null: the settings' policy
  int address_family = AF_UNSPEC;      // AddressFamily
  int connection_attempts = 1;         // TCP connects tried, 1 s apart (ConnectionAttempts)
  std::chrono::seconds alive_interval{kDefaultAliveInterval};
  int alive_count = kDefaultAliveCount;
  // -A / ForwardAgent: the user's agent socket its commands may use ("" =
  // $SSH_AUTH_SOCK); nullopt: none (the default, as in ssh).
  std::optional<std::string> forward_agent;
};

// Makes a session that has done nothing yet (its first advance() starts it).
using SessionFactory = std::function<std::unique_ptr<Session>(Endpoint endpoint, const ConnectionSettings& settings)>;

struct ConnectionSettings {
  const Credentials* credentials = nullptr;
  HostKeyPolicy* host_keys = nullptr;
  util::ChildReaper* reaper = nullptr;  // takes proxy commands of connections that end
  std::filesystem::path home;          // for shortening key paths in messages
  // Where a persist master keeps ready sessions between runs (null: no master).
  KeptSessions* pool = nullptr;
  // The run's clock: when bytes arrived, when a connect is tried again.
  Now now = Clock::now;
  // What open_session() makes; null: a real Connection (tests pass a fake).
  SessionFactory make_session;
};

class Session {
 public:
  enum class Phase { resolve, connect, handshake, host_key, auth, ready, failed };

  virtual ~Session() = default;

  // Goes as far as it can without blocking and says where it got: ready,
  // failed (failure_reason() says why), or the phase it waits in (wait()
  // says on what).
  virtual Phase advance() = 0;
  virtual Phase phase() const = 0;
  // "during SSH handshake": phase() in words, for messages.
  const char* phase_name() const;
  // The socket, or while a host name is being looked up, the lookup's eventfd.
  virtual int fd() const = 0;
  virtual util::Wait wait() const = 0;
  // The libssh2 session, once ready, for work that has no seam of its own
  // yet (port forwards); jobs open channels with open_channel().
  virtual LIBSSH2_SESSION* session() const = 0;
  // Once ready: a channel that runs `command` ("": the login shell), as an
  // ExecChannel; a test's fake session hands out its own.
  virtual std::unique_ptr<Channel> open_channel(std::string command, Channel::Settings settings) = 0;
  // True while a packet is half sent (libssh2 sends one at a time): work
  // then waits to write as well as read.
  virtual bool sending() const = 0;
  // The server's host key as its blob, once ready.
  virtual std::string host_key() const = 0;
  // Once ready: a direct-tcpip channel to host:port (a jump host's way to a
  // worker). Null with `*rc` set while it is not open: LIBSSH2_ERROR_EAGAIN
  // until the server answers (the same call again then), else why it failed.
  virtual std::unique_ptr<DirectChannel> open_direct(const std::string& host, std::uint16_t port, int* rc) = 0;
  // libssh2's words for its last error ("Channel open failure (connect failed)").
  virtual std::string last_error() const = 0;
  virtual const std::string& failure_reason() const = 0;
  // A host-key warning to show once the session is ready.
  virtual const std::string& warning() const = 0;
  // True once the TCP connection was established, or bytes arrived through
  // the transport (later failures are not about the address).
  virtual bool reached() const = 0;
  // True once the server sent its first bytes (its banner, during the
  // handshake): the pace's clock (fanout/handshake_pace.h).
  virtual bool greeted() const = 0;
  // Why the way to the worker (jump host, proxy command) failed, if it did:
  // the cause of a connection lost mid-run. Empty without a transport.
  virtual std::string path_failure() const = 0;

  // Resets what one turn of the event loop may read (called before each turn).
  virtual void new_turn() = 0;
  // Called first on every tick: a gap of a second or more between ticks is
  // tpush's own stall, not the peer's silence (heard_from(), stalled()).
  virtual void note_tick(Clock::time_point now) = 0;
  // When the peer was last heard from (after a stall, no earlier than its end).
  virtual Clock::time_point heard_from() const = 0;
  // The stalls' total, which the connect deadline does not count.
  virtual Clock::duration stalled() const = 0;
  // Time the way there waited for its turn in tpush's own queue (transport.h),
  // which the connect deadline does not count either; waiting_turn(): now.
  virtual Clock::duration waited() const = 0;
  virtual bool waiting_turn() const = 0;
  // About every 100 ms: a connect attempt due again, keepalives once ready.
  virtual void tick(Clock::time_point now) = 0;
  // Ends the session without waiting on the peer. Never blocks.
  virtual void abandon() = 0;

  // A ready session kept between runs (kept_sessions.h) goes idle: it forgets
  // the run that opened it; its proxy command, if any, goes to `reaper`.
  virtual void park(util::ChildReaper* reaper) = 0;
  // A kept session taken up by a new run for `endpoint`: the host key is
  // checked again under the run's policy. False when that refuses it
  // (failure_reason() says why): the caller connects afresh.
  virtual bool resume(Endpoint endpoint, const ConnectionSettings& settings) = 0;
  // True when the peer has closed or reset the connection (checked without reading).
  virtual bool peer_closed() const = 0;

  // The identity it logged in with, once ready.
  virtual LoginIdentity login_identity() const { return {}; }
  // The agent channels the worker opened since the last call (a command used
  // the agent forwarded on this session: exec_channel.h's forward_agent). The
  // caller serves and closes them; those no one takes are freed with the session.
  virtual std::vector<LIBSSH2_CHANNEL*> take_agent_channels() { return {}; }
};

// A new session to `endpoint`: settings.make_session's, or a real Connection.
std::unique_ptr<Session> open_session(Endpoint endpoint, const ConnectionSettings& settings);

}  // namespace tpush::ssh
