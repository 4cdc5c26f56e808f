#include "tpush/ssh/kept_sessions.h"

#include <algorithm>
#include <utility>

namespace tpush::ssh {

KeptSessions::KeptSessions(Now now) : jumps_(idle_) {
  idle_.reaper = &reaper_;
  idle_.now = std::move(now);
}

KeptSessions::~KeptSessions() { clear(); }

void KeptSessions::clear() {
  entries_.clear();
  jumps_.clear();
}

std::string KeptSessions::key_of(const Endpoint& e) {
  if (e.via && e.route.empty()) return {};
  const bool v6 = e.host.find(':') != std::string::npos;
  std::string key = e.user + "@" + (v6 ? "[" + e.host + "]" : e.host) + ":" + std::to_string(e.port);
  if (!e.route.empty()) key += " via " + e.route;
  return key;
}

// The most recently used first: the likeliest to be alive.
std::size_t KeptSessions::newest(const std::string& key) const {
  for (std::size_t i = entries_.size(); i-- > 0;)
    if (entries_[i].key == key) return i;
  return entries_.size();
}

KeptSessions::Kept KeptSessions::take(const std::string& key) {
  const std::size_t i = newest(key);
  if (i == entries_.size()) return {};
  Kept kept{std::move(entries_[i].connection), std::move(entries_[i].shell)};
  entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i));
  if (!kept.connection->peer_closed()) return kept;
  return {};  // closed by the peer: the caller connects afresh
}

bool KeptSessions::holds(const std::string& key) const {
  const std::size_t i = newest(key);
  return i < entries_.size() && !entries_[i].connection->peer_closed();
}

void KeptSessions::give(const std::string& key, std::unique_ptr<Session> c, std::unique_ptr<KeptShell> shell) {
  c->park(&reaper_);
  entries_.push_back({key, std::move(c), std::move(shell), idle_.now()});
}

void KeptSessions::tick(Clock::time_point now) {
  std::erase_if(entries_, [](const Entry& e) { return e.connection->peer_closed(); });
  reaper_.tick(now);
  for (auto& e : entries_) {
    e.connection->new_turn();
    e.connection->tick(now);
  }
  jumps_.tick(now);
}

std::vector<KeptSessions::Held> KeptSessions::held() const {
  std::vector<Held> out;
  out.reserve(entries_.size());
  for (const auto& e : entries_) out.push_back({e.key, e.idle_since});
  return out;
}

}  // namespace tpush::ssh
