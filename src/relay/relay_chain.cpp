#include "tpush/relay/relay_chain.h"

#include <map>

namespace tpush::relay {

RelayChain::RelayChain(std::size_t workers) : nodes_(workers), group_of_(workers, 0) {}

RelayChain::RelayChain(std::vector<std::size_t> group_of) : nodes_(group_of.size()), group_of_(std::move(group_of)) {}

void RelayChain::ready(std::size_t worker) {
  if (nodes_[worker].state != State::setting_up) return;
  nodes_[worker].state = State::idle;
  maybe_start();
}

void RelayChain::out(std::size_t worker, bool mid_attempt) {
  Node& n = nodes_[worker];
  if (n.state == State::out) return;
  const bool was_sending = n.state == State::receiving || n.state == State::stored;
  n.state = State::out;
  if (mid_attempt && was_sending && n.next) lose_sender(*n.next);
  maybe_start();
}

void RelayChain::stored(std::size_t worker) {
  if (nodes_[worker].state == State::receiving) nodes_[worker].state = State::stored;
  maybe_start();
}

void RelayChain::broken(std::size_t worker) {
  Node& n = nodes_[worker];
  if (n.state != State::receiving) return;
  n.state = State::idle;
  if (n.attempts >= kMaxAttempts) {
    n.state = State::out;
    n.exhausted = true;
  }
  maybe_start();
}

void RelayChain::hop_failed(std::size_t worker) {
  if (const auto next = nodes_[worker].next) lose_sender(*next);
  maybe_start();
}

void RelayChain::lose_sender(std::size_t worker) {
  Node& n = nodes_[worker];
  if (n.state != State::receiving || n.fed) return;
  n.fed = true;
  n.rescued = true;
  n.prev.reset();
  orders_.push_back({worker, n.attempts, false, std::nullopt, true});
}

// Still receiving, from a sender that broke: its copy will break too. One
// rescued by tpush's feed mid-attempt counts as broken until it has stored:
// the feed stops if any of the lost sender's bytes had come (kFeedCut), which
// tpush learns only when the feed ends, often after those behind it reported.
bool RelayChain::doomed(std::size_t worker) const {
  for (std::optional<std::size_t> w = worker; w;) {
    const Node& n = nodes_[*w];
    if (n.state != State::receiving && n.state != State::stored) return true;
    if (n.rescued) return n.state == State::receiving;
    if (n.fed) return false;
    w = n.prev;
  }
  return false;
}

void RelayChain::maybe_start() {
  std::vector<std::size_t> waiting;  // need the bytes, and may get them
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].state == State::setting_up) return;
    if (nodes_[i].state == State::receiving && doomed(i)) return;
    if (nodes_[i].state == State::idle) waiting.push_back(i);
  }
  std::map<std::size_t, std::vector<std::size_t>> chains;  // by group, in worker order
  for (std::size_t w : waiting) {
    if (nodes_[w].attempts + 1 >= kMaxAttempts) {
      start(w, std::nullopt, std::nullopt);  // its last try: straight from tpush
    } else {
      chains[group_of_[w]].push_back(w);
    }
  }
  for (const auto& [group, chain] : chains) {
    for (std::size_t i = 0; i < chain.size(); ++i) {
      start(chain[i], i > 0 ? std::optional(chain[i - 1]) : std::nullopt,
            i + 1 < chain.size() ? std::optional(chain[i + 1]) : std::nullopt);
    }
  }
}

void RelayChain::start(std::size_t worker, std::optional<std::size_t> prev, std::optional<std::size_t> next) {
  Node& n = nodes_[worker];
  n.state = State::receiving;
  ++n.attempts;
  n.prev = prev;
  n.next = next;
  n.fed = !prev;
  n.rescued = false;
  orders_.push_back({worker, n.attempts, true, next, n.fed});
}

std::vector<RelayChain::Order> RelayChain::take_orders() {
  std::vector<Order> out;
  out.swap(orders_);
  return out;
}

bool RelayChain::settled() const {
  for (const Node& n : nodes_)
    if (n.state != State::stored && n.state != State::out) return false;
  return true;
}

}  // namespace tpush::relay
