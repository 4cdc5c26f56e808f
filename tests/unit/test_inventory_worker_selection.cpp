#include <doctest/doctest.h>

#include "tpush/inventory/worker_selection.h"
#include "tpush/util/error.h"

using tpush::UsageError;
using tpush::inventory::WorkerSelection;

TEST_CASE("--worker all selects every worker, in any case") {
  CHECK(WorkerSelection::parse("all").resolve(4, "t") == std::vector<int>{0, 1, 2, 3});
  CHECK(WorkerSelection::parse("ALL").all());
  CHECK(WorkerSelection::parse(" All ").resolve(1, "t") == std::vector<int>{0});
}

TEST_CASE("--worker single index, list, range and mixes (sorted, unique)") {
  CHECK(WorkerSelection::parse("0").resolve(8, "t") == std::vector<int>{0});
  CHECK(WorkerSelection::parse("1,4").resolve(8, "t") == std::vector<int>{1, 4});
  CHECK(WorkerSelection::parse("1-3").resolve(8, "t") == std::vector<int>{1, 2, 3});
  CHECK(WorkerSelection::parse("6,0-2,1").resolve(8, "t") == std::vector<int>{0, 1, 2, 6});
  CHECK(WorkerSelection::parse("3-3").resolve(8, "t") == std::vector<int>{3});
  CHECK(WorkerSelection::parse("7").resolve(8, "t") == std::vector<int>{7});
}

TEST_CASE("--worker syntax errors are usage errors naming the value") {
  for (const char* bad : {"", "x", "1,,2", "-1", "1-", "-", "3-1", "1.5", "0x2", "1 2", "99999999999"}) {
    CAPTURE(bad);
    CHECK_THROWS_AS(WorkerSelection::parse(bad), UsageError);
  }
  try {
    WorkerSelection::parse("3-1");
    FAIL("no throw");
  } catch (const UsageError& e) {
    CHECK(std::string(e.what()).find("--worker 3-1") != std::string::npos);
  }
}

TEST_CASE("--worker 9 on an 8-worker TPU names the valid range") {
  auto sel = WorkerSelection::parse("9");
  try {
    sel.resolve(8, "mytpu");
    FAIL("no throw");
  } catch (const UsageError& e) {
    std::string msg = e.what();
    CHECK(msg.find("mytpu has 8 workers") != std::string::npos);
    CHECK(msg.find("0-7") != std::string::npos);
    CHECK(msg.find("worker 9") != std::string::npos);
  }
  CHECK_THROWS_AS(WorkerSelection::parse("0-8").resolve(8, "t"), UsageError);
  CHECK_THROWS_AS(WorkerSelection::parse("1").resolve(1, "t"), UsageError);
}
