// `tpush forward`: local ports whose connections are carried to a worker's
// side, each over a direct-tcpip channel of the worker's one session, as
// `ssh -L` does. Every local socket, each listener and a write watch on the
// session (a dup of its socket, so the loop can watch it beside the job) are
// services of the run's event loop; all of them drive one pump(), the only
// place that calls libssh2, so a packet libssh2 left half sent is always
// finished before any other channel's. A connection the far side refuses is
// reported (a notice) and closed; the forward goes on until Ctrl-C or the
// session ends.
#pragma once

#include <list>
#include <memory>
#include <string>
#include <vector>

#include "tpush/fanout/output_sink.h"
#include "tpush/fanout/session_job.h"
#include "tpush/util/pollable.h"

typedef struct _LIBSSH2_CHANNEL LIBSSH2_CHANNEL;

namespace tpush::fanout {

// One forward: connections to the local socket `listen_fd` (bound and
// listening, owned by the job from then on) go to `host`:`port` as the
// worker sees it. `text` names it in messages ("127.0.0.1:6006").
struct ForwardTarget {
  int listen_fd = -1;
  std::string text;
  std::string host;
  int port = 0;
};

class ForwardJob final : public SessionJob {
  class Listener;

 public:
  ForwardJob(std::size_t index, ssh::Endpoint endpoint, const ssh::ConnectionSettings& settings,
             Deadlines deadlines, std::vector<ForwardTarget> targets, std::string label, util::Reactor& reactor,
             OutputSink& out);
  ~ForwardJob() override;

  // Ctrl-C: the forward ends (it has no command to interrupt).
  void forward_interrupt() override;

  // Everything a forward does with libssh2 and its sockets, as far as it goes.
  void pump();
  // Takes the connections waiting on a listener (it said it had some).
  void accept_from(Listener& listener);

 private:
  class Connection;
  class SessionWrites;

  // Port forwards open direct-tcpip channels on the libssh2 session itself
  // (no seam of their own: they are tested end to end).
  LIBSSH2_SESSION* session() const { return ssh_session().session(); }
  void start_work() override;
  void advance_work() override;
  util::Wait work_wait() const override;
  void release_work() override;
  // No connection's channel is open, nor a write half sent: a persist master
  // keeps the session.
  bool work_clean() const override { return connections_.empty() && !half_sent_; }
  bool open_next();          // false when libssh2 must be waited for
  bool move(Connection& c);  // false when a write was left half sent
  void close(Connection& c, const std::string& refusal);
  void finish_if_lost();
  void register_all();
  void unregister_all();

  std::string label_;
  util::Reactor& reactor_;
  OutputSink& out_;
  std::vector<std::unique_ptr<Listener>> listeners_;
  std::list<std::unique_ptr<Connection>> connections_;
  std::unique_ptr<SessionWrites> writes_;
  Connection* half_sent_ = nullptr;  // its write must be finished before anything else
  bool moved_ = false;               // a pass of pump() read something from libssh2
  bool registered_ = false;
  bool stopping_ = false;
};

}  // namespace tpush::fanout
