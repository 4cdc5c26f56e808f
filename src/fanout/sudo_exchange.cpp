#include "tpush/fanout/sudo_exchange.h"

#include <algorithm>
#include <utility>

namespace tpush::fanout {

SudoExchange::SudoExchange(std::string prompt, std::string mark) : prompt_(std::move(prompt)), mark_(std::move(mark)) {}

std::size_t SudoExchange::open_tail() const {
  const auto longest_prefix_at_end = [&](std::string_view whole) {
    for (std::size_t n = std::min(whole.size(), held_.size()); n > 0; --n)
      if (std::string_view(held_).substr(held_.size() - n) == whole.substr(0, n)) return n;
    return std::size_t{0};
  };
  // The mark's line may end in "\r\n" (a pty): "mark\r" is still open.
  std::size_t tail = std::max(longest_prefix_at_end(prompt_), longest_prefix_at_end(mark_ + "\r\n"));
  return std::max(tail, longest_prefix_at_end(mark_ + "\n"));
}

SudoExchange::Seen SudoExchange::take(std::string_view bytes) {
  Seen seen;
  if (ran_) {
    seen.out.assign(bytes);
    return seen;
  }
  held_.append(bytes);
  for (;;) {
    if (after_prompt_ && !held_.empty()) {
      if (held_.starts_with("\r\n")) held_.erase(0, 2);
      else if (held_.starts_with("\n")) held_.erase(0, 1);
      else if (held_ == "\r") return seen;  // the "\n" of "\r\n" is yet to come
      after_prompt_ = false;
    }
    const std::size_t prompt_at = held_.find(prompt_);
    std::size_t mark_at = held_.find(mark_ + "\n");
    std::size_t mark_len = mark_.size() + 1;
    if (const std::size_t crlf = held_.find(mark_ + "\r\n"); crlf < mark_at) {
      mark_at = crlf;
      mark_len = mark_.size() + 2;
    }
    if (prompt_at == std::string::npos && mark_at == std::string::npos) break;
    if (prompt_at < mark_at) {
      seen.out.append(held_, 0, prompt_at);
      held_.erase(0, prompt_at + prompt_.size());
      ++seen.prompts;
      after_prompt_ = true;
      continue;
    }
    seen.out.append(held_, 0, mark_at);
    seen.out.append(held_, mark_at + mark_len);
    held_.clear();
    ran_ = seen.ran = true;
    return seen;
  }
  const std::size_t keep = open_tail();
  seen.out.append(held_, 0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return seen;
}

std::string SudoExchange::flush() { return std::exchange(held_, {}); }

}  // namespace tpush::fanout
