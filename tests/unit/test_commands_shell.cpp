// `tpush shell [LABEL]`: which worker a LABEL names.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "test_support.h"
#include "tpush/commands/shell.h"
#include "tpush/util/error.h"

namespace {

using tpush::commands::pick_worker;

tpush::inventory::Worker shell_worker(std::string host, std::string label, uint16_t port = 0) {
  tpush::inventory::Worker w;
  w.target.host = std::move(host);
  w.target.port = port;
  w.target.text = w.target.host;
  w.label = std::move(label);
  return w;
}

// The usage error LABEL gets.
std::string refusal_of(const std::vector<tpush::inventory::Worker>& ws, const std::string& label) {
  return tpush::test::error_of<tpush::UsageError>([&] { pick_worker(ws, label, "tpush shell " + label); });
}

}  // namespace

TEST_CASE("shell: no label is the first worker, a label or a host names one") {
  const std::vector<tpush::inventory::Worker> ws = {shell_worker("10.0.0.1", "s0w0"), shell_worker("10.0.0.2", "s0w1"),
                                                    shell_worker("10.0.0.3", "s1w0")};
  CHECK(pick_worker(ws, std::nullopt, "tpush shell") == 0);
  CHECK(pick_worker(ws, std::string("s1w0"), "tpush shell s1w0") == 2);
  CHECK(pick_worker(ws, std::string("10.0.0.2"), "tpush shell 10.0.0.2") == 1);
}

TEST_CASE("shell: a label that names no worker, or a host with several, is a usage error that lists them") {
  const std::vector<tpush::inventory::Worker> ws = {shell_worker("h", "w0"), shell_worker("h", "w1", 2222)};
  CHECK(refusal_of(ws, "w7") == "tpush shell w7: no such worker (the workers: w[0-1]); name one of them (without "
                              "one: the first)");
  CHECK(refusal_of(ws, "h") == "tpush shell h: several workers are on that host (w0, w1); name one by its label");
}
