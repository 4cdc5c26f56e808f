// ClusterShell's `nodeset` as an oracle for the host-list and node-set tests: runs
// its command line on many cases in one Python process
// (tests/fixtures/host_lists/nodeset_batch.py).
#pragma once

#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "test_support.h"
#include "tpush/util/shell_quote.h"

namespace tpush::test {

inline std::filesystem::path host_list_fixtures() {
  return source_root() / "tests" / "fixtures" / "host_lists";
}

struct NodesetRun {
  int rc = 0;
  std::string out;  // without the final newline
  std::string err;
};

// Runs `nodeset ARGS...` for each case; nullopt (with a note) when ClusterShell is
// not installed, so the comparison is skipped rather than failed.
inline std::optional<std::vector<NodesetRun>> run_nodeset(
    const std::vector<std::vector<std::string>>& cases) {
  TempDir dir;
  {
    std::ofstream request(dir / "request");
    for (const auto& args : cases) request << nlohmann::json(args).dump() << '\n';
  }
  const std::string python = ::access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
  const auto driver = host_list_fixtures() / "nodeset_batch.py";
  const auto run = run_shell(python + " " + util::shell_quote(driver.string()) + " < " +
                             util::shell_quote((dir / "request").string()) + " 2>/dev/null");
  if (run.status == 3) {
    MESSAGE("ClusterShell is not installed: comparison with nodeset skipped");
    return std::nullopt;
  }
  REQUIRE(run.status == 0);
  std::vector<NodesetRun> results;
  std::istringstream lines(run.out);
  std::string line;
  while (std::getline(lines, line)) {
    const auto j = nlohmann::json::parse(line);
    NodesetRun r{j.at("rc").get<int>(), j.at("out").get<std::string>(), j.at("err").get<std::string>()};
    if (!r.out.empty() && r.out.back() == '\n') r.out.pop_back();
    results.push_back(std::move(r));
  }
  REQUIRE(results.size() == cases.size());
  return results;
}

}  // namespace tpush::test
