#include "tpush/output/raw_output.h"

namespace tpush::output {

void RawOutput::data(std::size_t /*worker*/, fanout::Stream stream, std::string_view bytes) {
  writer_.write(stream == fanout::Stream::out ? 1 : 2, std::string(bytes));
}

void RawOutput::notice(std::string line) {
  if (!line.empty() && line.back() == '\n') line.pop_back();
  writer_.write(2, std::move(line) + "\r\n");
}

}  // namespace tpush::output
