// relay::RelayTransfer, what every worker's job of a relayed copy shares: the
// manifest it computes (sizes, SHA-256 from one read of each file), the
// stream every job reads at its own offset, the names it gives untrusted
// reports, and how each worker's copy came. Its jobs are RelayJob's test.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tpush/relay/relay_transfer.h"
#include "tpush/util/shared_bytes.h"

namespace {

using tpush::relay::ManifestEntry;
using tpush::relay::RelayItem;
using tpush::relay::RelayTransfer;
using tpush::util::SharedBytes;

ManifestEntry entry(const std::string& path, bool directory = false) {
  ManifestEntry e;
  e.path = path;
  e.directory = directory;
  e.mode = directory ? 0755 : 0644;
  return e;
}

std::vector<RelayItem> items() {
  return {{entry("cfg", true), nullptr},
          {entry("cfg/a.yaml"), SharedBytes::from_string("abc")},
          {entry("empty"), SharedBytes::from_string("")},
          {entry("b.bin"), SharedBytes::from_string("defg")}};
}

}  // namespace

TEST_CASE("relay transfer: each file's size and SHA-256 come from its bytes, and the setup carries the manifest in order") {
  RelayTransfer t(items(), {"w0", "w1"}, false);
  std::vector<ManifestEntry> expected{entry("cfg", true), entry("cfg/a.yaml"), entry("empty"), entry("b.bin")};
  expected[1].size = 3;
  expected[1].sha256 = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
  expected[2].sha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
  expected[3].size = 4;
  expected[3].sha256 = "4c8a43980498636e9c1d1595fa5d115af7937c2422dfe68a2520a52b7a5fb4de";
  CHECK(t.setup() == tpush::relay::relay_setup(expected));
  CHECK(t.stream_size() == 7);
}

TEST_CASE("relay transfer: the stream is the files' bytes back to back, read by each worker from its own offset") {
  RelayTransfer t(items(), {"w0"}, false);
  const tpush::ssh::InputSource& s = t.stream();
  CHECK(s.peek(0) == "abc");  // up to the end of a file: the next comes at the next read
  CHECK(s.peek(1) == "bc");
  CHECK(s.peek(3) == "defg");  // the empty file adds nothing
  CHECK_FALSE(s.at_end(6));
  CHECK(s.at_end(7));
  CHECK(s.peek(7).empty());
}

TEST_CASE("relay transfer: a report naming an entry the manifest does not have reads as its number, never out of bounds") {
  RelayTransfer t(items(), {"w0"}, false);
  CHECK(t.path(3) == "b.bin");
  CHECK(t.path(4) == "entry 4");
  CHECK(t.path(static_cast<std::size_t>(-1)) == "entry " + std::to_string(static_cast<std::size_t>(-1)));
}

TEST_CASE("relay transfer: the first worker's copy comes from tpush and each next one's from the worker before it") {
  RelayTransfer t(items(), {"w0", "w1", "w2"}, false);
  for (std::size_t w = 0; w < 3; ++w) t.ready(w);
  CHECK(t.how(0) == "from tpush");
  CHECK(t.how(1) == "from w0");
  CHECK(t.how(2) == "from w1");
}
