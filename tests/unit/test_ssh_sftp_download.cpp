// Where get puts each worker's files (ssh/sftp_download).
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tpush/commands/copy/copy.h"
#include "tpush/output/progress.h"
#include "tpush/ssh/sftp/download.h"
#include "tpush/ssh/sftp/upload.h"
#include "tpush/util/error.h"

namespace fs = std::filesystem;
using namespace tpush::commands;

TEST_CASE("get: every worker's files land in LOCALDIR/<label>/") {
  using tpush::ssh::download_target;
  CHECK(download_target("logs", "w0", "/home/me/job/train.log") == fs::path("logs/w0/train.log"));
  CHECK(download_target("logs", "10.0.0.5:2222", "job/out/") == fs::path("logs/10.0.0.5:2222/out"));
  CHECK(download_target("logs", "a/b", "x") == fs::path("logs/a_b/x"));
  CHECK(download_target("logs", "..", "x") == fs::path("logs/_../x"));
}
