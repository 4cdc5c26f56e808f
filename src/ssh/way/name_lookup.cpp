#include "tpush/ssh/way/name_lookup.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <system_error>
#include <thread>

#include "tpush/util/signals.h"

namespace tpush::ssh {

// Shared by the NameLookup and the thread running it; whichever lets go last
// frees it. The eventfd belongs to the NameLookup: only it closes the fd (so
// the number is never reused behind the event loop's back), and the thread
// writes to it only while the NameLookup still exists.
struct NameLookup::State {
  std::string host, port;
  addrinfo hints{};
  std::mutex mutex;
  // Written only by the NameLookup (under mutex once queued), so it reads it
  // freely; the thread reads it under mutex.
  int efd = -1;
  bool abandoned = false;        // guarded by mutex: the NameLookup is gone
  std::atomic<bool> done{false};  // rc and result are set (release/acquire)
  int rc = EAI_SYSTEM;
  addrinfo* result = nullptr;

  void run() {
    bool skip;
    {
      std::lock_guard lock(mutex);
      skip = abandoned;
    }
    if (!skip) rc = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &result);
    std::lock_guard lock(mutex);
    done.store(true, std::memory_order_release);
    if (abandoned || efd < 0) return;
    const std::uint64_t one = 1;
    while (::write(efd, &one, sizeof one) < 0 && errno == EINTR) {
    }
  }

  ~State() {
    if (result) ::freeaddrinfo(result);
  }
};

namespace {

// Detached threads, each taking queued lookups one at a time. The pool is
// never destroyed: at exit a thread may still be inside getaddrinfo().
class Pool {
 public:
  // False when no thread exists nor could be started (the caller then looks
  // the name up itself).
  bool submit(std::shared_ptr<NameLookup::State> state) {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(state));
    // An idle thread may already be woken for an earlier lookup: count queued
    // lookups, not wake-ups, so a held lookup never makes the next one wait.
    if (queue_.size() > static_cast<std::size_t>(idle_) && threads_ < NameLookup::max_threads) spawn();
    if (threads_ == 0) {
      queue_.pop_back();
      return false;
    }
    cv_.notify_one();
    return true;
  }

 private:
  void spawn() {
    // Signals belong to the event loop's signalfd, never to these threads.
    const util::BlockAllSignals blocked;
    try {
      std::thread([this] { work(); }).detach();
      ++threads_;
    } catch (const std::system_error&) {
      // out of threads: the lookups wait for the ones there are
    }
  }

  void work() {
    std::unique_lock lock(mutex_);
    for (;;) {
      ++idle_;
      cv_.wait(lock, [this] { return !queue_.empty(); });
      --idle_;
      std::shared_ptr<NameLookup::State> state = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      state->run();
      state.reset();
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<NameLookup::State>> queue_;
  int threads_ = 0;
  int idle_ = 0;
};

Pool& pool() {
  static Pool* const p = new Pool;
  return *p;
}

}  // namespace

NameLookup::NameLookup(std::string host, std::string port, const addrinfo& hints)
    : state_(std::make_shared<State>()) {
  state_->host = std::move(host);
  state_->port = std::move(port);
  state_->hints = hints;
  state_->efd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  // Without an eventfd the loop could not be woken: look it up here, as
  // without threads.
  if (state_->efd < 0 || !pool().submit(state_)) state_->run();
}

NameLookup::~NameLookup() {
  std::lock_guard lock(state_->mutex);
  state_->abandoned = true;
  if (state_->efd >= 0) ::close(state_->efd);
  state_->efd = -1;
}

int NameLookup::fd() const { return state_->efd; }

bool NameLookup::done() const { return state_->done.load(std::memory_order_acquire); }

int NameLookup::take(addrinfo** addresses) {
  *addresses = nullptr;
  if (!done()) return EAI_AGAIN;
  *addresses = state_->result;
  state_->result = nullptr;
  return state_->rc;
}

}  // namespace tpush::ssh
