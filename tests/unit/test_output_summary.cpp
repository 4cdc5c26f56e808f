// The run summary and the exit-code mixing rule (docs/CLI-CONTRACT.md).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tpush/fanout/result.h"
#include "tpush/output/exit_codes.h"
#include "tpush/output/summary.h"

namespace {

using tpush::fanout::Outcome;
using tpush::fanout::WorkerResult;
using tpush::output::exit_code_for;
using tpush::output::format_summary;
using tpush::output::SummaryMode;
namespace exit_code = tpush::output::exit_code;

WorkerResult result(Outcome o, std::string reason = {}, int status = -1) {
  WorkerResult r;
  r.outcome = o;
  r.reason = std::move(reason);
  r.exit_status = status;
  return r;
}

std::vector<WorkerResult> all(std::initializer_list<Outcome> outcomes) {
  std::vector<WorkerResult> out;
  for (Outcome o : outcomes) out.push_back(result(o, "because"));
  return out;
}

}  // namespace

TEST_CASE("summary: exit code mixing rule") {
  CHECK(exit_code_for({}, false) == exit_code::ok);
  CHECK(exit_code_for(all({Outcome::ok, Outcome::ok}), false) == 0);
  CHECK(exit_code_for(all({Outcome::ok, Outcome::failed}), false) == 1);
  for (Outcome bad : {Outcome::unreachable, Outcome::timed_out, Outcome::lost, Outcome::not_started}) {
    CAPTURE(static_cast<int>(bad));
    CHECK(exit_code_for(all({bad}), false) == 255);
    CHECK(exit_code_for(all({Outcome::ok, bad}), false) == 255);
    // 255 wins over 1, whichever comes first.
    CHECK(exit_code_for(all({Outcome::failed, bad}), false) == 255);
    CHECK(exit_code_for(all({bad, Outcome::failed}), false) == 255);
    // 130 wins over everything.
    CHECK(exit_code_for(all({bad, Outcome::failed}), true) == 130);
  }
  CHECK(exit_code_for(all({Outcome::ok}), true) == exit_code::interrupted);
  CHECK(exit_code_for({}, true) == 130);
  CHECK(exit_code_for(all({Outcome::failed, Outcome::interrupted}), true) == 130);
  CHECK(exit_code_for(all({Outcome::ok, Outcome::interrupted, Outcome::not_started}), true) == 130);
  CHECK(exit_code::unreachable == 255);
  CHECK(exit_code::command_failed == 1);
}

TEST_CASE("summary: an interrupted worker gives 130 regardless of order") {
  // Even without the run-level flag, an `interrupted` result means 130 ("130 wins").
  CHECK(exit_code_for(all({Outcome::interrupted, Outcome::ok}), false) == 130);
  CHECK(exit_code_for(all({Outcome::failed, Outcome::interrupted}), false) == 130);
  CHECK(exit_code_for(all({Outcome::interrupted, Outcome::unreachable}), false) == 130);
}

TEST_CASE("summary: the mixing rule does not depend on result order") {
  // exit_code_for returns at the first interrupted/unreachable-like result it
  // meets, so [unreachable, interrupted] gives 255 and [interrupted, unreachable] 130.
  CHECK(exit_code_for(all({Outcome::unreachable, Outcome::interrupted}), false) ==
        exit_code_for(all({Outcome::interrupted, Outcome::unreachable}), false));
  CHECK(exit_code_for(all({Outcome::not_started, Outcome::interrupted}), false) == 130);
}

TEST_CASE("summary: counts line format") {
  std::vector<WorkerResult> results = {
      result(Outcome::ok, "", 0), result(Outcome::failed, "exit 3", 3),
      result(Outcome::unreachable, "connect refused"), result(Outcome::ok, "", 0)};
  const std::vector<std::string> labels = {"n1", "n2", "n3", "n4"};
  CHECK(format_summary(results, labels, 1.234, SummaryMode::automatic) ==
        "tpush: 4 workers: 2 ok, 1 failed, 1 unreachable, 0 timed out (1.23s)\n"
        "tpush: n2: exit 3\n"
        "tpush: n3: connect refused\n");

  SUBCASE("one worker is singular") {
    CHECK(format_summary({result(Outcome::ok)}, {"h"}, 0.5, SummaryMode::automatic) ==
          "tpush: 1 worker: 1 ok, 0 failed, 0 unreachable, 0 timed out (0.50s)\n");
  }
  SUBCASE("lost and interrupted appear only when non-zero") {
    std::vector<WorkerResult> r = {result(Outcome::lost, "connection lost (no data for 3 keepalives)"),
                                   result(Outcome::timed_out, "timed out after 5s"),
                                   result(Outcome::interrupted, "interrupted"),
                                   result(Outcome::not_started, "not started (interrupted)"),
                                   result(Outcome::ok)};
    const std::string s = format_summary(r, {"a", "b", "c", "d", "e"}, 12.0, SummaryMode::automatic);
    CHECK(s.substr(0, s.find('\n') + 1) ==
          "tpush: 5 workers: 1 ok, 0 failed, 0 unreachable, 1 timed out, 1 lost, 2 interrupted (12.00s)\n");
    CHECK(s.find("tpush: a: connection lost (no data for 3 keepalives)\n") != std::string::npos);
    CHECK(s.find("tpush: d: not started (interrupted)\n") != std::string::npos);
    CHECK(s.find("tpush: e:") == std::string::npos);

    const std::string only_lost =
        format_summary({result(Outcome::lost, "connection lost")}, {"a"}, 0, SummaryMode::automatic);
    CHECK(only_lost.rfind("tpush: 1 worker: 0 ok, 0 failed, 0 unreachable, 0 timed out, 1 lost (0.00s)\n", 0) == 0);
    CHECK(only_lost.find("interrupted") == std::string::npos);

    const std::string only_stopped =
        format_summary({result(Outcome::not_started, "not started (interrupted)")}, {"a"}, 0,
                       SummaryMode::automatic);
    CHECK(only_stopped.rfind(
              "tpush: 1 worker: 0 ok, 0 failed, 0 unreachable, 0 timed out, 1 interrupted (0.00s)\n", 0) == 0);
    CHECK(only_stopped.find("lost") == std::string::npos);
  }
}

TEST_CASE("summary: per-worker lines are aligned") {
  std::vector<WorkerResult> r = {result(Outcome::failed, "killed by SIGKILL"), result(Outcome::ok),
                                 result(Outcome::timed_out, "connect timed out after 10s"),
                                 result(Outcome::ok)};
  const std::vector<std::string> labels = {"x", "a-very-long-ok-label", "host-10", "y"};
  SUBCASE("automatic: width from the listed workers") {
    CHECK(format_summary(r, labels, 2, SummaryMode::automatic) ==
          "tpush: 4 workers: 2 ok, 1 failed, 0 unreachable, 1 timed out (2.00s)\n"
          "tpush: x:       killed by SIGKILL\n"
          "tpush: host-10: connect timed out after 10s\n");
  }
  SUBCASE("always: every worker, ok ones too") {
    CHECK(format_summary(r, labels, 2, SummaryMode::always) ==
          "tpush: 4 workers: 2 ok, 1 failed, 0 unreachable, 1 timed out (2.00s)\n"
          "tpush: x:                    killed by SIGKILL\n"
          "tpush: a-very-long-ok-label: ok\n"
          "tpush: host-10:              connect timed out after 10s\n"
          "tpush: y:                    ok\n");
  }
}

TEST_CASE("summary: quiet and always modes") {
  const std::vector<WorkerResult> clean = {result(Outcome::ok), result(Outcome::ok)};
  const std::vector<std::string> labels = {"a", "bb"};
  CHECK(format_summary(clean, labels, 1, SummaryMode::quiet).empty());
  CHECK(format_summary(clean, labels, 1, SummaryMode::automatic) ==
        "tpush: 2 workers: 2 ok, 0 failed, 0 unreachable, 0 timed out (1.00s)\n");
  CHECK(format_summary(clean, labels, 1, SummaryMode::always) ==
        "tpush: 2 workers: 2 ok, 0 failed, 0 unreachable, 0 timed out (1.00s)\n"
        "tpush: a:  ok\n"
        "tpush: bb: ok\n");

  const std::vector<WorkerResult> failing = {result(Outcome::ok), result(Outcome::failed, "exit 1", 1)};
  CHECK(format_summary(failing, labels, 1, SummaryMode::quiet) ==
        format_summary(failing, labels, 1, SummaryMode::automatic));
  CHECK(format_summary(failing, labels, 1, SummaryMode::quiet) ==
        "tpush: 2 workers: 1 ok, 1 failed, 0 unreachable, 0 timed out (1.00s)\n"
        "tpush: bb: exit 1\n");
}

TEST_CASE("summary: brief (the prompt's) is the head line, then one line per reason naming its workers") {
  std::vector<WorkerResult> results = {result(Outcome::ok), result(Outcome::failed, "exit 1", 1),
                                       result(Outcome::ok), result(Outcome::failed, "exit 1", 1),
                                       result(Outcome::unreachable, "connect refused")};
  const std::vector<std::string> labels = {"w0", "w1", "w2", "w3", "w4"};
  const std::string s = format_summary(results, labels, 0.5, SummaryMode::brief);
  CHECK(s ==
        "tpush: 5 workers: 2 ok, 2 failed, 1 unreachable, 0 timed out (0.50s)\n"
        "tpush: w[1,3]: exit 1\n"
        "tpush: w4: connect refused\n");
  std::vector<WorkerResult> ok(3, result(Outcome::ok));
  CHECK(format_summary(ok, {"a", "b", "c"}, 1, SummaryMode::brief) ==
        "tpush: 3 workers: 3 ok, 0 failed, 0 unreachable, 0 timed out (1.00s)\n");
}
