// Line splitting and prefixing of arbitrary worker output: LineSplitter alone,
// then LineOutput with two workers through a real Writer into memfds.
// Invariants: re-joining the split lines gives the input bytes back, and each
// worker's prefixed output is its input cut into lines, each "label: " + line +
// "\n" (a final line without newline included), whatever the chunking and
// interleaving.
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz_support.h"
#include "tpush/output/line_output.h"
#include "tpush/output/line_splitter.h"
#include "tpush/output/writer.h"

using namespace tpush::output;

namespace {

std::string contents(int fd) {
  std::string out;
  char buf[1 << 16];
  for (off_t off = 0;;) {
    const ssize_t n = pread(fd, buf, sizeof buf, off);
    if (n <= 0) return out;
    out.append(buf, static_cast<std::size_t>(n));
    off += n;
  }
}

std::string prefixed(std::string_view input, std::string_view prefix) {
  std::string out;
  while (!input.empty()) {
    const auto nl = input.find('\n');
    out.append(prefix).append(input.substr(0, nl)).push_back('\n');
    if (nl == std::string_view::npos) break;
    input.remove_prefix(nl + 1);
  }
  return out;
}

// The lines of `out` that start with `prefix`, each with its newline.
std::string lines_of(std::string_view out, std::string_view prefix) {
  std::string kept;
  while (!out.empty()) {
    const auto nl = out.find('\n');
    const auto line = out.substr(0, nl == std::string_view::npos ? out.size() : nl + 1);
    if (line.starts_with(prefix)) kept.append(line);
    out.remove_prefix(line.size());
  }
  return kept;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  // The first byte seeds the chunk sizes; the rest is the stream.
  unsigned chunk_seed = data[0];
  const std::string_view input = tpush::fuzz::as_text(data + 1, size - 1);
  auto next_chunk = [&](std::size_t left) {
    chunk_seed = chunk_seed * 1103515245u + 12345u;
    return std::min<std::size_t>(left, 1 + (chunk_seed >> 16) % 97);
  };

  LineSplitter splitter;
  std::string joined;
  const LineSplitter::Emit join = [&](std::string_view line, bool newline) {
    joined.append(line);
    if (newline) joined.push_back('\n');
  };
  for (std::string_view rest = input; !rest.empty();) {
    const std::size_t n = next_chunk(rest.size());
    splitter.append(rest.substr(0, n), join);
    rest.remove_prefix(n);
  }
  splitter.finish(join);
  FUZZ_CHECK(joined == input);

  // The chunks go to workers a and b in turn, two rounds on stdout, two on stderr.
  const int out_fd = memfd_create("fuzz-out", MFD_CLOEXEC), err_fd = memfd_create("fuzz-err", MFD_CLOEXEC);
  FUZZ_CHECK(out_fd >= 0 && err_fd >= 0);
  std::string sent[2][2];  // [worker][stream]
  {
    Writer writer(out_fd, err_fd);
    LineOutput lines(writer, {"a", "b"}, {});
    std::size_t turn = 0;
    for (std::string_view rest = input; !rest.empty(); ++turn) {
      const std::size_t n = next_chunk(rest.size());
      const std::size_t worker = turn % 2, stream = (turn / 2) % 2;
      lines.data(worker, stream == 0 ? Stream::out : Stream::err, rest.substr(0, n));
      sent[worker][stream].append(rest.substr(0, n));
      rest.remove_prefix(n);
      if (chunk_seed & 0x100) lines.flush();
    }
    lines.end(0);
    lines.end(1);
    lines.flush();
    writer.drain_and_stop();
  }
  const std::string out = contents(out_fd), err = contents(err_fd);
  close(out_fd);
  close(err_fd);
  FUZZ_CHECK(lines_of(out, "a: ") == prefixed(sent[0][0], "a: "));
  FUZZ_CHECK(lines_of(out, "b: ") == prefixed(sent[1][0], "b: "));
  FUZZ_CHECK(lines_of(err, "a: ") == prefixed(sent[0][1], "a: "));
  FUZZ_CHECK(lines_of(err, "b: ") == prefixed(sent[1][1], "b: "));
  FUZZ_CHECK(out.size() == prefixed(sent[0][0], "a: ").size() + prefixed(sent[1][0], "b: ").size());
  return 0;
}
