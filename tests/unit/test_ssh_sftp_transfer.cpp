// Temporary names for SFTP transfers (ssh/sftp_transfer).
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

TEST_CASE("upload temporary names sit beside the target") {
  const std::string t = tpush::ssh::SftpTransfer::temp_name("/a/b c/f.txt");
  CHECK(t.rfind("/a/b c/f.txt.tpush-tmp-", 0) == 0);
  CHECK(t.size() == std::string("/a/b c/f.txt.tpush-tmp-").size() + 12);
  CHECK(tpush::ssh::remote_parent("/a/b/c") == "/a/b");
  CHECK(tpush::ssh::remote_parent("/a") == "/");
  CHECK(tpush::ssh::remote_parent("a") == "");
  CHECK(tpush::ssh::remote_parent("a/b/") == "a");
}
