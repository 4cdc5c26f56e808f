// A job whose work needs an authenticated SSH session: the connection, its
// deadline, keepalives and the "nothing received for 3 alive intervals" rule
// (ssh/session_watch.h), a kept session taken and given back (persist), and
// the restart on a fresh session when a kept one broke, written once for
// every kind of work done on the session (a command, an SFTP transfer). A
// subclass says how to start its work on the ready session, how to drive it,
// and what it waits on. The session comes from ssh::open_session (a real
// Connection, or a test's fake) and the time from the settings' clock.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "tpush/fanout/worker_job.h"
#include "tpush/ssh/agent/channel.h"
#include "tpush/ssh/exec_channel.h"
#include "tpush/ssh/kept_shell.h"
#include "tpush/ssh/session.h"
#include "tpush/ssh/session_watch.h"

namespace tpush::fanout {

class SessionJob : public WorkerJob {
 public:
  void advance(Clock::time_point now) final;
  void tick(Clock::time_point now) final;
  int fd() const final { return connection_ ? connection_->fd() : -1; }
  util::Wait wait() const final;
  bool paused_for_output() const final { return working_ && work_paused(); }
  bool connecting() const final { return !finished() && !working_; }
  Clock::time_point setup_progress(Clock::time_point now) const final;
  std::size_t setup_stage() const final;

 protected:
  SessionJob(std::size_t index, ssh::Endpoint endpoint, const ssh::ConnectionSettings& settings,
             Deadlines deadlines);

  // The session is ready: create the work on it (a channel, a transfer),
  // through ssh_session().
  virtual void start_work() = 0;
  // Drives the work as far as it goes without blocking; may finish() the job.
  virtual void advance_work() = 0;
  // What the work waits on, on the session's socket.
  virtual util::Wait work_wait() const = 0;
  // Called with the job's tick (about every 100 ms) while the work runs: work
  // that others hand things to (a relay's orders) picks them up here.
  virtual void tick_work() {}
  // True while the work stopped reading on purpose (the output is congested):
  // silence then is tpush's doing, not the worker's.
  virtual bool work_paused() const { return false; }
  // The -u deadline passed: last words before hanging up (TERM for a command).
  // True when they need the session a little longer: the job then finishes
  // itself (timed out) once they are delivered, or is finished kStopGrace later.
  virtual bool before_timeout() { return false; }
  // The job ends: forget the work (if it started) without touching the
  // network; the session is being abandoned and freeing it frees the work's
  // libssh2 objects.
  virtual void release_work() = 0;
  // True when the work ended cleanly on the session (every channel it opened
  // closed): a persist master may then keep the session for the next run.
  virtual bool work_clean() const { return false; }

  // True while the work may start again on another session: it has asked the
  // worker for nothing but a channel, or for what can run there at most once
  // (a kept shell's command that has not answered: it goes again behind its
  // claim, ssh/kept_shell.h).
  virtual bool work_may_start_again() const { return false; }
  // Forgets the work without touching the network or the output, to start it
  // again on another session.
  virtual void reset_work() {}

  // The work failed on a session kept from an earlier run (settings.pool)
  // while it could still start again (work_may_start_again()): the session
  // died while idle (sshd restarted, the host rebooted, a firewall forgot
  // it). Connects afresh and starts the work again, once. False when the
  // session was a new one, or the work had begun: the failure is the worker's.
  bool restart_on_fresh_session();

  bool working() const { return working_; }
  // True when the session may be kept for a later run (a persist master's).
  bool may_keep_session() const { return !pool_key_.empty(); }
  // The session's kept shell (ssh/kept_shell.h), if it has one: it came with
  // a kept session, or the work started it for the runs after this one.
  ssh::KeptShell* kept_shell() const { return shell_.get(); }
  void set_kept_shell(std::unique_ptr<ssh::KeptShell> shell) { shell_ = std::move(shell); }
  // "connection lost (DETAIL)", or with the cause when the way there failed
  // ("connection lost (jump host bastion:22: connection lost (...))").
  std::string lost_reason(const std::string& detail) const;
  // Ends the job as `channel`, which ended, says: its failure (the connection
  // lost, or what failed), the signal that killed the command, or its status.
  void finish_from(const ssh::Channel& channel);
  ssh::Session& ssh_session() const { return *connection_; }
  // What answers the agent channels the worker opens on this session (a
  // command used the agent forwarded to it): by default one that refuses
  // everything (ssh-add -l: "The agent has no identities").
  virtual ssh::AgentPolicy& agent_policy() { return refuse_agent_; }
  // True while an agent channel has an answer not yet written.
  bool agent_answer_waiting() const;

 private:
  void serve_agent();
  void release() final;
  bool reached() const final { return !connection_ || connection_->reached(); }
  void take_kept_session(const ssh::Endpoint& endpoint, const ssh::ConnectionSettings& settings);

  std::unique_ptr<ssh::Session> connection_;  // null once given back to the pool
  std::unique_ptr<ssh::KeptShell> shell_;         // on connection_
  ssh::KeptSessions* pool_ = nullptr;
  // With a pool: the key of this worker's sessions, and while the session is a
  // kept one, what a fresh connection needs.
  std::string pool_key_;
  std::optional<std::pair<ssh::Endpoint, ssh::ConnectionSettings>> fresh_;
  bool restarted_ = false;
  bool working_ = false;
  ssh::SessionWatch watch_;  // silence counts from the work's start, or output resumed
  Clock::time_point work_start_{};
  std::optional<Clock::time_point> stopping_since_;  // before_timeout() asked for time
  ssh::AgentPolicy refuse_agent_{nullptr};
  std::vector<std::unique_ptr<ssh::AgentChannel>> agent_channels_;
};

}  // namespace tpush::fanout
