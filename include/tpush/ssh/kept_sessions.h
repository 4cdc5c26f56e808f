// Ready sessions a persist master (persist/master.h) keeps between runs: a
// later run on the same worker opens a channel on one instead of connecting,
// exchanging keys and logging in again. A session is lent to one job at a
// time, which gives it back when its work ended cleanly on it; one that ended
// otherwise (lost, interrupted, timed out) is closed instead. Sessions
// behind jump hosts are kept with the jump hosts' sessions that carry them.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "tpush/ssh/way/jump_pool.h"
#include "tpush/ssh/kept_shell.h"
#include "tpush/ssh/session.h"
#include "tpush/util/child_reaper.h"

namespace tpush::ssh {

class KeptSessions {
 public:
  // `now`: the clock of its upkeep and of a session's idle time (a test's own).
  explicit KeptSessions(Now now = Clock::now);
  ~KeptSessions();

  // Under which key a session to `e` is kept: who logs in where, and through
  // which proxy command or jump hosts. Empty when it cannot be kept (a way
  // there that the run does not name).
  static std::string key_of(const Endpoint& e);

  // The jump hosts of kept sessions: runs through the master make their
  // routes here (JumpPool::lend at the start, park at the end).
  JumpPool& jumps() { return jumps_; }

  struct Kept {
    std::unique_ptr<Session> connection;
    std::unique_ptr<KeptShell> shell;  // the session's kept shell, if it has one
  };
  // A kept session for `key` whose peer has not hung up (connection null if
  // none). It is the caller's until given back (resume() it first).
  Kept take(const std::string& key);
  // True when take(key) would give a session now.
  bool holds(const std::string& key) const;
  // Keeps a ready session with no channel open but its kept shell's, which
  // is between commands (or still starting, its channel open).
  void give(const std::string& key, std::unique_ptr<Session> c, std::unique_ptr<KeptShell> shell);

  // Idle upkeep, about every second between runs: keepalives go out, so
  // firewalls and sshd's ClientAliveInterval see traffic (jump hosts relay
  // them); sessions whose peer closed the connection (or whose proxy command
  // or jump host ended) are dropped.
  void tick(Clock::time_point now);

  struct Held {
    std::string name;  // user@host:port
    Clock::time_point idle_since;
  };
  std::vector<Held> held() const;
  std::size_t size() const { return entries_.size(); }
  // Ends every session (a disconnect message each, best effort), then the
  // jump hosts'.
  void clear();

 private:
  struct Entry {
    std::string key;
    std::unique_ptr<Session> connection;
    std::unique_ptr<KeptShell> shell;
    Clock::time_point idle_since;
  };
  // The index of the entry take(key) would give, or entries_.size().
  std::size_t newest(const std::string& key) const;

  util::ChildReaper reaper_;  // proxy commands of kept sessions that closed (outlives entries_)
  ConnectionSettings idle_;   // between runs: the reaper, nothing of a run's
  JumpPool jumps_;
  std::vector<Entry> entries_;
};

}  // namespace tpush::ssh
