// --json's objects: strings escaped as JSON requires, lines that are not UTF-8
// carried as base64, worker and summary objects that nlohmann-json parses.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "test_support.h"
#include "tpush/output/json_output.h"
#include "tpush/util/base64.h"

namespace {

using nlohmann::json;
using tpush::fanout::Outcome;
using tpush::fanout::Stream;
using tpush::fanout::WorkerResult;
using tpush::output::JsonOutput;
using tpush::output::Writer;

std::vector<json> parse_lines(const std::string& text) {
  std::vector<json> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
  return out;
}

}  // namespace

TEST_CASE("json_output: json_string escapes what JSON requires and parses back") {
  for (std::string s : {std::string("a\"b\\c"), std::string("tab\there\r\n"), std::string("\x01\x1f\x7f", 3),
                        std::string("caf\xc3\xa9")}) {
    CAPTURE(s);
    CHECK(json::parse(tpush::output::json_string(s)).get<std::string>() == s);
  }
}

TEST_CASE("json_output: lines, worker objects and a summary, every byte recoverable") {
  tpush::test::MemFile out, err;
  {
    Writer writer(out.fd(), err.fd());
    JsonOutput sink(writer, {{"w0", "10.0.0.2", "10.0.0.2:22"}, {"w1", "h1", "[fe80::1]:2222"}});
    sink.data(0, Stream::out, "hello\nbin");
    sink.data(1, Stream::err, std::string("\xff\xfe\n", 3));
    sink.data(0, Stream::out, "ary \x80 end\nno newline");
    sink.end(0);
    sink.end(1);
    WorkerResult ok;
    ok.outcome = Outcome::ok;
    ok.exit_status = 0;
    ok.reason = "exit 0";
    ok.seconds = 1.5;
    ok.started = std::chrono::system_clock::time_point(std::chrono::milliseconds(1'700'000'000'123));
    WorkerResult killed;
    killed.outcome = Outcome::failed;
    killed.signal = "KILL";
    killed.reason = "killed by SIGKILL";
    sink.finished(0, ok);
    sink.finished(1, killed);
    sink.summary({ok, killed}, 2.25, 1);
    writer.drain_and_stop();
  }
  const auto objs = parse_lines(out.contents());
  REQUIRE(objs.size() == 7);
  // Lines of one worker stay in order; the worker's stream is named.
  CHECK(objs[0] == json({{"type", "line"}, {"worker", "w0"}, {"host", "10.0.0.2"}, {"stream", "stdout"}, {"text", "hello"}}));
  CHECK(objs[1]["stream"] == "stderr");
  CHECK(tpush::util::base64_decode(objs[1]["bytes"].get<std::string>()) == std::string("\xff\xfe", 2));
  CHECK_FALSE(objs[1].contains("text"));
  CHECK(tpush::util::base64_decode(objs[2]["bytes"].get<std::string>()) == std::string("binary \x80 end"));
  CHECK(objs[3]["text"] == "no newline");
  CHECK(objs[3]["newline"] == false);
  CHECK(objs[4]["type"] == "worker");
  CHECK(objs[4]["outcome"] == "ok");
  CHECK(objs[4]["exit_status"] == 0);
  CHECK(objs[4]["signal"].is_null());
  CHECK(objs[4]["started"] == "2023-11-14T22:13:20.123Z");
  CHECK(objs[4]["seconds"].get<double>() == doctest::Approx(1.5));
  CHECK(objs[5]["address"] == "[fe80::1]:2222");
  CHECK(objs[5]["exit_status"].is_null());
  CHECK(objs[5]["signal"] == "KILL");
  CHECK(objs[5]["started"].is_null());
  CHECK(objs[6] == json::parse(R"({"type":"summary","workers":2,"ok":1,"failed":1,"unreachable":0,"timed_out":0,
                                 "lost":0,"interrupted":0,"not_started":0,"stopped":0,"seconds":2.25,"exit_code":1})"));
  CHECK(err.contents().empty());
}
