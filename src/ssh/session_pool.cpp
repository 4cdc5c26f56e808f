#include "tpush/ssh/session_pool.h"

#include <algorithm>

namespace tpush::ssh {

SessionPool::SessionPool() : jumps_(idle_) { idle_.reaper = &reaper_; }

SessionPool::~SessionPool() { clear(); }

void SessionPool::clear() {
  entries_.clear();
  jumps_.clear();
}

std::string SessionPool::key_of(const Endpoint& e) {
  if (e.via && e.route.empty()) return {};
  const bool v6 = e.host.find(':') != std::string::npos;
  std::string key = e.user + "@" + (v6 ? "[" + e.host + "]" : e.host) + ":" + std::to_string(e.port);
  if (!e.route.empty()) key += " via " + e.route;
  return key;
}

SessionPool::Kept SessionPool::take(const std::string& key) {
  // The most recently used first: the likeliest to be alive.
  for (auto it = entries_.rbegin(); it != entries_.rend(); ++it) {
    if (it->key != key) continue;
    Kept kept{std::move(it->connection), std::move(it->shell)};
    entries_.erase(std::next(it).base());
    if (!kept.connection->peer_closed()) return kept;
    return {};  // closed by the peer: the caller connects afresh
  }
  return {};
}

bool SessionPool::holds(const std::string& key) const {
  return std::any_of(entries_.begin(), entries_.end(),
                     [&](const Entry& e) { return e.key == key && !e.connection->peer_closed(); });
}

void SessionPool::give(const std::string& key, std::unique_ptr<Connection> c, std::unique_ptr<KeptShell> shell) {
  c->park(&reaper_);
  entries_.push_back({key, std::move(c), std::move(shell), Clock::now()});
}

void SessionPool::tick(Clock::time_point now) {
  std::erase_if(entries_, [](const Entry& e) { return e.connection->peer_closed(); });
  reaper_.tick(now);
  for (auto& e : entries_) {
    e.connection->new_turn();
    e.connection->tick(now);
  }
  jumps_.tick(now);
}

std::vector<SessionPool::Held> SessionPool::held() const {
  std::vector<Held> out;
  out.reserve(entries_.size());
  for (const auto& e : entries_) out.push_back({e.key, e.idle_since});
  return out;
}

}  // namespace tpush::ssh
