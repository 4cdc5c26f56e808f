#include "tpush/output/writer.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "tpush/util/file.h"

namespace tpush::output {

Writer::Writer(int out_fd, int err_fd)
    : out_fd_(out_fd),
      err_fd_(err_fd),
      out_is_terminal_(::isatty(out_fd) == 1),
      wake_fd_(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  thread_ = std::thread([this] { run(); });
}

Writer::~Writer() {
  drain_and_stop();
  if (wake_fd_ >= 0) close(wake_fd_);
}

void Writer::write(int stream, std::string data) {
  if (data.empty() || gone_.load()) return;
  const std::size_t n = data.size();
  {
    std::lock_guard lock(mu_);
    queue_.push_back({stream == 2 ? err_fd_ : out_fd_, std::move(data)});
    if (queued_.fetch_add(n) + n >= high_water) was_congested_ = true;
  }
  cv_.notify_one();
}

void Writer::status(std::string line) {
  if (gone_.load()) return;
  const std::size_t n = line.size();
  {
    std::lock_guard lock(mu_);
    queue_.push_back({err_fd_, std::move(line), true});
    queued_.fetch_add(n);  // taken off again when written, as any chunk
  }
  cv_.notify_one();
}

// Writes one chunk, erasing the status line first when it shares the terminal.
bool Writer::put(const Chunk& chunk) {
  static constexpr std::string_view kErase = "\r\033[K";
  if (chunk.status) {
    if (chunk.data.empty() && !status_shown_) return true;
    status_shown_ = !chunk.data.empty();
    return util::write_all(err_fd_, chunk.data.empty() ? std::string(kErase)
                                                       : "\r" + chunk.data + "\033[K");
  }
  if (status_shown_ && (chunk.fd == err_fd_ || out_is_terminal_)) {
    status_shown_ = false;
    if (!util::write_all(err_fd_, kErase)) return false;
  }
  return util::write_all(chunk.fd, chunk.data);
}

void Writer::clear_wake() {
  std::uint64_t v;
  while (::read(wake_fd_, &v, sizeof v) > 0) {
  }
}

void Writer::wake() {
  const std::uint64_t one = 1;
  [[maybe_unused]] auto r = ::write(wake_fd_, &one, sizeof one);
}

void Writer::drain() {
  std::unique_lock lock(mu_);
  idle_.wait(lock, [this] { return (queue_.empty() && !busy_) || stopping_; });
}

void Writer::drain_and_stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void Writer::run() {
  for (;;) {
    Chunk chunk;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping and drained
      chunk = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
    }
    // A failed write (EPIPE, EBADF, ENOSPC...) means the output is gone.
    const bool ok = gone_.load() || put(chunk);
    const std::size_t left = queued_.fetch_sub(chunk.data.size()) - chunk.data.size();
    if (!ok && !gone_.exchange(true)) wake();
    bool notify = false;
    {
      std::lock_guard lock(mu_);
      if (was_congested_ && left < low_water) {
        was_congested_ = false;
        notify = true;
      }
      busy_ = false;
      if (queue_.empty()) idle_.notify_all();
    }
    if (notify) wake();
  }
}

}  // namespace tpush::output
