#include "tpush/ssh/kept_shell_marker.h"

#include <algorithm>

namespace tpush::ssh {
KeptShellMarker::KeptShellMarker(std::string tag, std::size_t max_word) : needle_(std::move(tag)), max_word_(max_word) {}

std::string KeptShellMarker::feed(std::string_view chunk) {
  std::string out;
  if (word_) {
    rest_.append(chunk);
    return out;
  }
  held_.append(chunk);
  std::size_t from = 0;
  for (;;) {
    if (in_word_) {
      const std::size_t nl = held_.find('\n', from);
      if (nl == std::string::npos) {
        if (held_.size() - from <= max_word_) {
          held_.erase(0, from);
          return out;
        }
      } else if (nl - from <= max_word_) {
        word_ = held_.substr(from, nl - from);
        rest_ = held_.substr(nl + 1);
        held_.clear();
        return out;
      }
      // Too long for a word: the tag was output after all (it cannot be, with
      // the nonce; but never lose it). Everything so far passes.
      in_word_ = false;
      out.append(needle_);
      continue;  // `from` already points past the needle
    }
    const std::size_t at = held_.find(needle_, from);
    if (at != std::string::npos) {
      out.append(held_, from, at - from);
      from = at + needle_.size();
      in_word_ = true;
      continue;
    }
    // Keep the longest suffix that is a start of the needle.
    std::size_t keep = std::min(held_.size() - from, needle_.size() - 1);
    while (keep > 0 && needle_.compare(0, keep, held_, held_.size() - keep, keep) != 0) --keep;
    out.append(held_, from, held_.size() - from - keep);
    held_.erase(0, held_.size() - keep);
    return out;
  }
}

std::string KeptShellMarker::flush() {
  std::string out = in_word_ && !word_ ? needle_ : std::string();
  in_word_ = false;
  return out + std::exchange(held_, {});
}

}  // namespace tpush::ssh
