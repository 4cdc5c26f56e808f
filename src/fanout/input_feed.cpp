#include "tpush/fanout/input_feed.h"

#include <unistd.h>

#include <cerrno>

namespace tpush::fanout {

InputFeed::InputFeed(int fd, std::size_t limit) : fd_(fd), limit_(limit) {}

std::size_t InputFeed::read_some() {
  if (eof_) return 0;
  std::string chunk(64 * 1024, '\0');
  const ssize_t n = ::read(fd_, chunk.data(), chunk.size());
  if (n < 0) {
    if (errno == EAGAIN || errno == EINTR) return 0;
    eof_ = true;  // a read error ends the input like EOF does
    return 0;
  }
  if (n == 0) {
    eof_ = true;
    return 0;
  }
  chunk.resize(static_cast<std::size_t>(n));
  chunks_.push_back(std::move(chunk));
  total_ += static_cast<std::uint64_t>(n);
  return static_cast<std::size_t>(n);
}

std::string_view InputFeed::peek(std::uint64_t offset) const {
  if (offset < base_ || offset >= total_) return {};
  std::uint64_t at = base_;
  for (const auto& c : chunks_) {
    if (offset < at + c.size()) return std::string_view(c).substr(static_cast<std::size_t>(offset - at));
    at += c.size();
  }
  return {};
}

void InputFeed::trim(std::uint64_t offset) {
  while (!chunks_.empty() && base_ + chunks_.front().size() <= offset) {
    base_ += chunks_.front().size();
    chunks_.pop_front();
  }
}

}  // namespace tpush::fanout
