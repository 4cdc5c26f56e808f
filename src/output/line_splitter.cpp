#include "tpush/output/line_splitter.h"

namespace tpush::output {

void LineSplitter::append(std::string_view data, const Emit& emit) {
  while (!data.empty()) {
    const auto nl = data.find('\n');
    const std::string_view piece = data.substr(0, nl);
    if (nl != std::string_view::npos && partial_.empty() && piece.size() <= max_line) {
      emit(piece, true);  // the common case: a whole line in one chunk, no copy
      data.remove_prefix(nl + 1);
      continue;
    }
    partial_.append(piece);
    // A runaway line leaves in max_line pieces; one of exactly max_line bytes
    // waits for its newline.
    while (partial_.size() > max_line) {
      emit(std::string_view(partial_).substr(0, max_line), false);
      partial_.erase(0, max_line);
    }
    if (nl == std::string_view::npos) return;
    emit(partial_, true);
    partial_.clear();
    data.remove_prefix(nl + 1);
  }
}

void LineSplitter::finish(const Emit& emit) {
  if (!partial_.empty()) {
    emit(partial_, false);
    partial_.clear();
  }
}

}  // namespace tpush::output
