#include "tpush/fanout/session_job.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "tpush/ssh/kept_sessions.h"
#include "tpush/ssh/session_wait.h"

namespace tpush::fanout {
namespace {

// How long a job that timed out may keep its session to deliver its last words.
constexpr auto kStopGrace = std::chrono::seconds(2);

}  // namespace

SessionJob::SessionJob(std::size_t index, ssh::Endpoint endpoint, const ssh::ConnectionSettings& settings,
                       Deadlines deadlines)
    : WorkerJob(index, deadlines, settings.now), pool_(settings.pool), watch_(deadlines.watch()) {
  if (pool_) take_kept_session(endpoint, settings);
  if (!connection_) connection_ = ssh::open_session(std::move(endpoint), settings);
}

void SessionJob::take_kept_session(const ssh::Endpoint& endpoint, const ssh::ConnectionSettings& settings) {
  pool_key_ = ssh::KeptSessions::key_of(endpoint);
  if (pool_key_.empty()) return;
  auto kept = pool_->take(pool_key_);
  if (!kept.connection) return;
  if (!kept.connection->resume(endpoint, settings)) {
    // The host key the session was opened with is not accepted now (known_hosts
    // changed): a fresh connection says so in the usual words.
    spdlog::debug("{}: kept session not used: {}", pool_key_, kept.connection->failure_reason());
    return;
  }
  connection_ = std::move(kept.connection);
  shell_ = std::move(kept.shell);
  fresh_.emplace(endpoint, settings);
}

bool SessionJob::restart_on_fresh_session() {
  if (!fresh_ || finished() || !work_may_start_again()) return false;
  spdlog::debug("{}: kept session is gone; connecting again", pool_key_);
  reset_work();
  shell_.reset();  // it lived on the old session
  // The new socket is made while the old one is still open, so it cannot get
  // the same fd number: the event loop sees a new fd and watches it.
  auto old = std::exchange(connection_, ssh::open_session(std::move(fresh_->first), fresh_->second));
  fresh_.reset();
  watch_.start(now());  // the fresh session's connect deadline is its own
  connection_->advance();
  old->abandon();
  working_ = false;
  stopping_since_.reset();
  restarted_ = true;
  return true;
}

util::Wait SessionJob::wait() const {
  if (finished()) return util::Wait::none;
  return working_ ? work_wait() : connection_->wait();
}

void SessionJob::advance(Clock::time_point now) {
  if (finished()) return;
  if (!started()) watch_.start(now);
  begin(now);
  connection_->new_turn();
  if (!working_) {
    switch (connection_->advance()) {
      case ssh::Session::Phase::failed: return finish(Outcome::unreachable, connection_->failure_reason());
      case ssh::Session::Phase::ready: break;
      default: return;
    }
    if (!connection_->warning().empty()) spdlog::warn("{}", connection_->warning());
    working_ = true;
    work_start_ = now;
    watch_.heard(now);
    start_work();
  }
  const bool was_paused = work_paused();
  serve_agent();
  advance_work();
  if (std::exchange(restarted_, false)) return advance(now);
  if (was_paused && !work_paused()) watch_.heard(now);
}

Clock::time_point SessionJob::setup_progress(Clock::time_point now) const {
  return connection_->waiting_turn() ? now : connection_->heard_from();
}

// The stages that wait on the server: TCP's answer, sshd's banner, then the
// key exchange (checking its host key is tpush's own work; auth ends the
// handshake).
std::size_t SessionJob::setup_stage() const {
  switch (connection_->phase()) {
    case ssh::Session::Phase::handshake: return connection_->greeted() ? 2 : 1;
    case ssh::Session::Phase::host_key:
    case ssh::Session::Phase::auth: return 3;
    default: return 0;
  }
}

// The connect deadline counts the worker's own time: not tpush's stalls, and
// not the wait for a turn in tpush's own queue (ssh/session_watch.h).
void SessionJob::tick(Clock::time_point now) {
  if (finished() || !started()) return;
  connection_->note_tick(now);
  if (!working_) {
    if (auto expired = watch_.connect_expired(now, *connection_))
      return finish(Outcome::timed_out, std::move(*expired));
    connection_->tick(now);  // a connect attempt due again (ConnectionAttempts)
    return;
  }
  if (command_deadline_passed(now, work_start_)) {
    if (!stopping_since_) {
      stopping_since_ = now;
      if (before_timeout()) return;
    } else if (now - *stopping_since_ < kStopGrace) {
      return;
    }
    return finish(Outcome::timed_out, timed_out_reason());
  }
  if (work_paused()) return;
  if (const auto silent = watch_.silence_expired(now, *connection_)) {
    if (restart_on_fresh_session()) return advance(now);
    return finish(Outcome::lost, lost_reason(*silent));
  }
  connection_->tick(now);
  if (finished()) return;
  serve_agent();  // a request passed on to the user's agent may have its answer
  tick_work();
}

bool SessionJob::agent_answer_waiting() const {
  return std::any_of(agent_channels_.begin(), agent_channels_.end(), [](const auto& c) { return c->answer_waiting(); });
}

void SessionJob::serve_agent() {
  for (LIBSSH2_CHANNEL* c : connection_->take_agent_channels())
    agent_channels_.push_back(std::make_unique<ssh::AgentChannel>(c, agent_policy()));
  std::erase_if(agent_channels_, [](const auto& c) { return !c->advance(); });
}

std::string SessionJob::lost_reason(const std::string& detail) const {
  const std::string cause = connection_->path_failure();
  return "connection lost (" + (cause.empty() ? detail : cause) + ")";
}

void SessionJob::finish_from(const ssh::Channel& channel) {
  if (channel.phase() == ssh::Channel::Phase::failed) {
    if (channel.server_hung_up()) return finish(Outcome::lost, lost_reason(channel.error()));
    return finish(Outcome::failed, channel.error());
  }
  if (!channel.exit_signal().empty())
    return finish(Outcome::failed, "killed by SIG" + channel.exit_signal(), -1, channel.exit_signal());
  const int status = channel.exit_status();
  finish(status == 0 ? Outcome::ok : Outcome::failed, "exit " + std::to_string(status), status);
}

void SessionJob::release() {
  const bool keep = !pool_key_.empty() && working_ && work_clean() &&
                    connection_->phase() == ssh::Session::Phase::ready && !connection_->peer_closed();
  release_work();
  for (auto& c : agent_channels_) c->release();
  if (keep) {
    // A shell that ended is dropped, unless it never could start: that one
    // stays to say so, and the session's later commands use exec channels.
    if (shell_ && !shell_->alive() && !shell_->unavailable()) shell_.reset();
    return pool_->give(pool_key_, std::move(connection_), std::move(shell_));
  }
  if (shell_) shell_->release();
  shell_.reset();
  connection_->abandon();
}

}  // namespace tpush::fanout
