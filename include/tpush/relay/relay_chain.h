// Who sends each worker its bytes in a relayed copy: the decisions alone, no
// network (the jobs report what their control scripts say, and carry out the
// orders; relay_script.h has the worker's side).
//
// Once every worker is set up (ready) or out, the ready ones form one chain
// in worker order per group (a TPU slice: its workers share a fast network):
// tpush feeds the first, and each passes the bytes on to the next as it
// stores them, so the client's link carries them once per group.
//
// When a link breaks:
//   - a worker whose sender is gone (its connection lost, or its hop to this
//     worker failed) is fed by tpush instead, and keeps passing the bytes on,
//     so the rest of the chain carries on (unless some of the sender's bytes
//     had arrived: then its copy breaks, as do those behind it, so until it
//     has stored, those behind it that break wait for it);
//   - a worker whose copy arrived short or different waits, with the others
//     downstream of the same break, until every worker that was still
//     receiving behind that break has reported; then those that need the
//     bytes form a new chain, fed by tpush again;
//   - a worker that failed twice that way gets the bytes from tpush directly,
//     passing nothing on; after a third failure it fails.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace tpush::relay {

class RelayChain {
 public:
  static constexpr int kMaxAttempts = 3;

  explicit RelayChain(std::size_t workers);
  // `group_of[i]`: worker i's group; chains never cross groups.
  explicit RelayChain(std::vector<std::size_t> group_of);

  // What tpush tells a worker: receive attempt `attempt` (`go`, passing the
  // bytes on to `next` if set), and/or have tpush feed that attempt.
  struct Order {
    std::size_t worker = 0;
    int attempt = 1;
    bool go = false;
    std::optional<std::size_t> next;
    bool feed = false;
  };

  // The worker's control script is set up.
  void ready(std::size_t worker);
  // The worker is out of the transfer for good. `mid_attempt`: it went while
  // it may still have been passing bytes on (its session was lost), so its
  // next worker needs another sender; otherwise its attempt ended first (its
  // own store failed, after it passed everything on).
  void out(std::size_t worker, bool mid_attempt);
  // The worker stored every file, checked.
  void stored(std::size_t worker);
  // The worker's copy arrived short or with other bytes: it needs them again.
  void broken(std::size_t worker);
  // The worker could not pass the bytes on to its next one.
  void hop_failed(std::size_t worker);

  // The orders the last events call for, each once.
  std::vector<Order> take_orders();

  // True once no worker needs anything more (each stored or out).
  bool settled() const;
  // True for a worker whose copy broke on each of its kMaxAttempts attempts.
  bool exhausted(std::size_t worker) const { return nodes_[worker].exhausted; }
  // Who sends the worker its bytes in its current (or last) attempt: another
  // worker, or tpush (nullopt).
  std::optional<std::size_t> sender(std::size_t worker) const { return nodes_[worker].prev; }
  // The worker's current (or last) attempt, from 1.
  int attempt(std::size_t worker) const { return nodes_[worker].attempts; }

 private:
  enum class State { setting_up, idle, receiving, stored, out };
  struct Node {
    State state = State::setting_up;
    int attempts = 0;  // attempts begun
    std::optional<std::size_t> prev, next;
    bool fed = false;  // tpush feeds it in its current attempt
    bool rescued = false;  // ... because its sender was lost mid-attempt
    bool exhausted = false;
  };

  void lose_sender(std::size_t worker);  // `worker` is fed by tpush from now on
  bool doomed(std::size_t worker) const;
  void maybe_start();
  void start(std::size_t worker, std::optional<std::size_t> prev, std::optional<std::size_t> next);

  std::vector<Node> nodes_;
  std::vector<std::size_t> group_of_;
  std::vector<Order> orders_;
};

}  // namespace tpush::relay
