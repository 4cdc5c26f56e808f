// The cp/get progress line (output/progress).
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tpush/commands/copy.h"
#include "tpush/output/progress.h"
#include "tpush/ssh/sftp_download.h"
#include "tpush/ssh/sftp_upload.h"
#include "tpush/util/error.h"

namespace fs = std::filesystem;
using namespace tpush::commands;

TEST_CASE("progress line: bytes, workers done, slowest first") {
  tpush::output::Progress p({"w0", "w1", "w2"}, 1000, false);
  p.worker(0).started = p.worker(0).done = true;
  p.worker(0).bytes = 1000;
  p.worker(1).started = true;
  p.worker(1).bytes = 100;
  p.worker(2).started = true;
  p.worker(2).bytes = 500;
  const std::string line = p.line(200);
  CHECK(line == "tpush: 1.6 KiB / 2.9 KiB (53%), 1/3 workers done, slowest: w1 10% w2 50%");
  CHECK(p.line(20).size() == 19);
}
