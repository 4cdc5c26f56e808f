// tpush's stdin, read once and streamed to every worker's command as it
// arrives. Each worker's channel keeps its own offset; data is kept from the
// slowest running worker's offset on (everything, while some workers have not
// started yet under the fan-out cap), and reading pauses while that exceeds
// `limit`: the slowest worker sets the pace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>

#include "tpush/ssh/exec_channel.h"

namespace tpush::fanout {

class InputFeed final : public ssh::InputSource {
 public:
  static constexpr std::size_t default_limit = 64u << 20;

  explicit InputFeed(int fd, std::size_t limit = default_limit);

  int fd() const { return fd_; }
  // False for files and /dev/null, which epoll cannot watch: they are read
  // whenever there is room.
  bool pollable() const { return pollable_; }
  void set_pollable(bool p) { pollable_ = p; }
  bool eof() const { return eof_; }
  // Reads what is there (one chunk); returns bytes read (0 at EOF or EAGAIN).
  std::size_t read_some();

  // Data at `offset` that has arrived so far (empty when none yet).
  std::string_view peek(std::uint64_t offset) const override;
  // True when everything was read and `offset` reached the end.
  bool at_end(std::uint64_t offset) const override { return eof_ && offset >= total_; }
  std::uint64_t total() const { return total_; }
  // Forgets data before `offset` (no running or future worker needs it).
  void trim(std::uint64_t offset);
  std::size_t held() const { return static_cast<std::size_t>(total_ - base_); }
  std::size_t limit() const { return limit_; }

 private:
  int fd_;
  std::size_t limit_;
  bool pollable_ = true;
  bool eof_ = false;
  std::deque<std::string> chunks_;
  std::uint64_t base_ = 0;   // offset of chunks_.front()
  std::uint64_t total_ = 0;  // bytes read so far
};

}  // namespace tpush::fanout
