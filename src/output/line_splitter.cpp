#include "tpush/output/line_splitter.h"

namespace tpush::output {

void LineSplitter::append(std::string_view data, const Emit& emit) {
  while (!data.empty()) {
    const auto nl = data.find('\n');
    if (nl == std::string_view::npos) {
      partial_.append(data);
      while (partial_.size() >= max_line) {
        emit(std::string_view(partial_).substr(0, max_line), false);
        partial_.erase(0, max_line);
      }
      return;
    }
    if (partial_.empty()) {
      emit(data.substr(0, nl), true);  // common case: no copy
    } else {
      partial_.append(data.substr(0, nl));
      emit(partial_, true);
      partial_.clear();
    }
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
