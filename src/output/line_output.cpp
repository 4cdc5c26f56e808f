#include "tpush/output/line_output.h"

#include <algorithm>

#include "tpush/output/terminal_text.h"

namespace tpush::output {
namespace {

constexpr std::string_view kOutColor = "\033[36m";  // cyan for stdout prefixes
constexpr std::string_view kErrColor = "\033[31m";  // red for stderr prefixes
constexpr std::string_view kReset = "\033[0m";


}  // namespace

LineOutput::LineOutput(Writer& writer, const std::vector<std::string>& labels,
                       LineOutputOptions opts)
    : WriterSink(writer), opts_(opts) {
  std::size_t width = 0;
  for (const auto& l : labels) width = std::max(width, l.size());
  for (int s = 0; s < 2; ++s) {
    splitters_[s].resize(labels.size());
    if (!opts_.prefix) continue;
    prefixes_[s].reserve(labels.size());
    for (const auto& l : labels) {
      std::string p;
      if (opts_.color) p += s == 0 ? kOutColor : kErrColor;
      p += l;
      p += ':';
      if (opts_.color) p += kReset;
      const bool align = s == 0 ? opts_.align_out : opts_.align_err;
      p.append(align ? width - l.size() + 1 : 1, ' ');
      prefixes_[s].push_back(std::move(p));
    }
  }
}

void LineOutput::emit(std::size_t worker, Stream stream, std::string_view line, bool newline) {
  auto& out = pending_[index_of(stream)];
  if (opts_.prefix) {
    out += prefixes_[index_of(stream)][worker];
    if (stream == Stream::out ? opts_.escape_out : opts_.escape_err) append_for_terminal(out, line);
    else out += line;
    out += '\n';  // prefixed output is line-oriented: a final partial line gets one
  } else {
    out += line;
    if (newline) out += '\n';
  }
}

void LineOutput::data(std::size_t worker, Stream stream, std::string_view bytes) {
  splitters_[index_of(stream)][worker].append(
      bytes, [&](std::string_view line, bool nl) { emit(worker, stream, line, nl); });
  // Hand big batches over at once, so the writer's congestion (and with it the
  // backpressure on reading) sees every byte we hold.
  if (pending_[index_of(stream)].size() >= flush_threshold) flush();
}

void LineOutput::end(std::size_t worker) {
  for (Stream s : {Stream::out, Stream::err}) {
    splitters_[index_of(s)][worker].finish(
        [&](std::string_view line, bool nl) { emit(worker, s, line, nl); });
  }
}

void LineOutput::notice(std::string line) {
  flush();  // after the worker lines already formatted
  writer_.write(2, std::move(line));
}

void LineOutput::flush() {
  for (int s = 0; s < 2; ++s) {
    if (pending_[s].empty()) continue;
    writer_.write(s + 1, std::move(pending_[s]));
    pending_[s] = std::string();
  }
}

}  // namespace tpush::output
