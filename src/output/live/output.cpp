#include "tpush/output/live/output.h"

#include <cstring>

#include "tpush/output/live/text.h"

namespace tpush::output {
namespace {

constexpr std::size_t kLiveMaxLast = 4096;  // of the last line, more than any row shows

char live_stream_tag(fanout::Stream s) { return s == fanout::Stream::out ? '1' : '2'; }

}  // namespace

void LiveOutput::append(fanout::Stream stream, std::string_view bytes) {
  ++generation_;
  const std::size_t k = fanout::index_of(stream);
  last_stream_ = static_cast<int>(k);
  std::string& partial = partial_[k];
  while (!bytes.empty()) {
    const void* found = std::memchr(bytes.data(), '\n', bytes.size());
    const std::size_t nl =
        found ? static_cast<std::size_t>(static_cast<const char*>(found) - bytes.data()) : bytes.size();
    const std::size_t room = kMaxLine - partial.size();
    if (nl > room) {  // a line too long to hold whole: keep it as pieces
      partial.append(bytes.substr(0, room));
      keep_line(stream, partial);
      partial.clear();
      bytes.remove_prefix(room);
      continue;
    }
    if (!found) {
      partial.append(bytes);
      break;
    }
    if (partial.empty()) {
      keep_line(stream, bytes.substr(0, nl));
    } else {
      partial.append(bytes.substr(0, nl));
      keep_line(stream, partial);
      partial.clear();
    }
    bytes.remove_prefix(nl + 1);
  }
}

void LiveOutput::end() {
  ++generation_;
  for (int k = 0; k < 2; ++k) {
    if (partial_[k].empty()) continue;
    keep_line(k == 0 ? fanout::Stream::out : fanout::Stream::err, partial_[k]);
    partial_[k].clear();
  }
}

void LiveOutput::keep_line(fanout::Stream stream, std::string_view text) {
  note_last(text);
  log_ += live_stream_tag(stream);
  log_.append(text);
  log_ += '\n';
  // Drop the oldest lines while over the bound; erase them only once they are a
  // quarter of it, so each byte is moved a few times at most, not once per line.
  while (log_.size() - head_ > bound_) {
    const std::size_t nl = log_.find('\n', head_);
    dropped_ += nl - head_;  // the line and its newline, not the tag
    ++dropped_lines_;
    head_ = nl + 1;
  }
  if (head_ > bound_ / 4 || head_ == log_.size()) {
    log_.erase(0, head_);
    head_ = 0;
  }
}

void LiveOutput::note_last(std::string_view line) {
  const std::string_view visible = live_visible_part(line);
  if (visible.empty()) return;
  last_.assign(visible.substr(0, kLiveMaxLast));
}

std::string_view LiveOutput::last_line() const {
  const std::string_view unfinished = live_visible_part(partial_[last_stream_]);
  if (!unfinished.empty()) return unfinished.substr(0, kLiveMaxLast);
  return last_;
}

std::vector<LiveOutput::Line> LiveOutput::lines() const {
  std::vector<Line> out;
  const std::string_view log(log_);
  std::size_t at = head_;
  while (at < log.size()) {
    const std::size_t nl = log.find('\n', at);
    out.push_back({log.substr(at + 1, nl - at - 1), log[at] == '1' ? fanout::Stream::out : fanout::Stream::err});
    at = nl + 1;
  }
  for (int k = 0; k < 2; ++k)
    if (!partial_[k].empty()) out.push_back({partial_[k], k == 0 ? fanout::Stream::out : fanout::Stream::err});
  return out;
}

}  // namespace tpush::output
