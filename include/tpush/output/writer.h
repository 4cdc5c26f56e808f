// Writes tpush's stdout and stderr from one background thread, so a slow reader
// never blocks the event loop. The queue is bounded by congestion signalling: the
// event loop stops reading from workers while congested() is true (backpressure),
// and wake_fd() becomes readable when the queue drains or the reader goes away.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

namespace tpush::output {

class Writer {
 public:
  static constexpr std::size_t high_water = 4u << 20;
  static constexpr std::size_t low_water = 1u << 20;

  Writer(int out_fd, int err_fd);
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Queues bytes for fd out (stream 1) or err (stream 2). Never blocks.
  void write(int stream, std::string data);
  // A status line on stderr, a terminal (the caller checks): drawn in place,
  // and erased before anything else is written to a terminal, so no line is
  // torn; the next status() draws it again. Empty: erase it.
  void status(std::string line);
  bool congested() const { return queued_.load() >= high_water; }
  // True once a write failed with EPIPE (or another error): the reader is gone.
  bool reader_gone() const { return gone_.load(); }
  // Readable when a congested queue fell below low water, or the reader went away.
  int wake_fd() const { return wake_fd_; }
  void clear_wake();
  // Returns once everything queued so far is written (or the reader is gone):
  // before tpush writes to the terminal itself (a prompt).
  void drain();
  // Writes everything queued, then stops the thread. Idempotent.
  void drain_and_stop();

 private:
  struct Chunk {
    int fd;
    std::string data;
    bool status = false;
  };
  bool put(const Chunk& chunk);
  void run();
  void wake();

  int out_fd_, err_fd_;
  bool out_is_terminal_ = false;
  bool status_shown_ = false;  // writer thread only
  int wake_fd_ = -1;
  std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable idle_;  // the queue emptied and its last chunk is written
  bool busy_ = false;             // a chunk taken off the queue is being written
  std::deque<Chunk> queue_;
  std::atomic<std::size_t> queued_{0};
  std::atomic<bool> gone_{false};
  bool stopping_ = false;
  bool was_congested_ = false;
  std::thread thread_;
};

}  // namespace tpush::output
