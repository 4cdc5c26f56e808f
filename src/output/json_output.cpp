#include "tpush/output/json_output.h"

#include <cmath>
#include <cstdio>
#include <ctime>
#include <utility>

#include "tpush/util/base64.h"
#include "tpush/util/string.h"

namespace tpush::output {
namespace {

constexpr std::size_t kFlushAt = 64u << 10;

std::string iso_time(std::chrono::system_clock::time_point t) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[96];  // room for any int the compiler can imagine; 24 used
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000));
  return buf;
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", std::isfinite(v) ? v : 0.0);
  return buf;
}

}  // namespace

std::string json_string(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size() + 2);
  out += '"';
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += "\\u00";
          out += kHex[c >> 4];
          out += kHex[c & 15];
        } else {
          out += ch;
        }
    }
  }
  out += '"';
  return out;
}

std::string worker_json(const WorkerIdentity& who, const fanout::WorkerResult& r) {
  const bool started = r.started != std::chrono::system_clock::time_point{};
  std::string o = "{\"type\":\"worker\",\"worker\":" + json_string(who.label) + ",\"host\":" + json_string(who.host) +
                  ",\"address\":" + json_string(who.address) + ",\"outcome\":\"" + fanout::outcome_name(r.outcome) +
                  "\",\"exit_status\":" + (r.exit_status >= 0 ? std::to_string(r.exit_status) : "null") +
                  ",\"signal\":" + (r.signal.empty() ? "null" : json_string(r.signal)) +
                  ",\"reason\":" + json_string(util::is_utf8(r.reason) ? r.reason : "(not UTF-8)") +
                  ",\"started\":" + (started ? "\"" + iso_time(r.started) + "\"" : "null") +
                  ",\"seconds\":" + number(r.seconds) + "}";
  return o;
}

std::string summary_json(const std::vector<fanout::WorkerResult>& results, double seconds, int exit_code) {
  std::size_t count[fanout::kOutcomes] = {};
  for (const auto& r : results) ++count[static_cast<int>(r.outcome)];
  std::string o = "{\"type\":\"summary\",\"workers\":" + std::to_string(results.size());
  for (int k = 0; k < fanout::kOutcomes; ++k)
    o += ",\"" + std::string(fanout::outcome_name(static_cast<fanout::Outcome>(k))) + "\":" + std::to_string(count[k]);
  o += ",\"seconds\":" + number(seconds) + ",\"exit_code\":" + std::to_string(exit_code) + "}";
  return o;
}

JsonOutput::JsonOutput(Writer& writer, std::vector<WorkerIdentity> workers)
    : WriterSink(writer), workers_(std::move(workers)) {
  heads_.reserve(workers_.size());
  for (const auto& w : workers_)
    heads_.push_back("{\"type\":\"line\",\"worker\":" + json_string(w.label) + ",\"host\":" + json_string(w.host) +
                     ",\"stream\":");
  for (auto& s : splitters_) s.resize(workers_.size());
}

void JsonOutput::emit(std::size_t worker, fanout::Stream stream, std::string_view line, bool newline) {
  pending_ += heads_[worker];
  pending_ += stream == fanout::Stream::out ? "\"stdout\"" : "\"stderr\"";
  if (util::is_utf8(line)) {
    pending_ += ",\"text\":";
    pending_ += json_string(line);
  } else {
    pending_ += ",\"bytes\":\"";
    pending_ += util::base64_encode(line);
    pending_ += '"';
  }
  if (!newline) pending_ += ",\"newline\":false";
  pending_ += "}\n";
}

void JsonOutput::data(std::size_t worker, fanout::Stream stream, std::string_view bytes) {
  splitters_[stream == fanout::Stream::out ? 0 : 1][worker].append(
      bytes, [&](std::string_view line, bool newline) { emit(worker, stream, line, newline); });
  if (pending_.size() >= kFlushAt) flush();
}

void JsonOutput::end(std::size_t worker) {
  for (auto stream : {fanout::Stream::out, fanout::Stream::err})
    splitters_[stream == fanout::Stream::out ? 0 : 1][worker].finish(
        [&](std::string_view line, bool newline) { emit(worker, stream, line, newline); });
}

void JsonOutput::finished(std::size_t worker, const fanout::WorkerResult& result) {
  pending_ += worker_json(workers_[worker], result);
  pending_ += '\n';
}

void JsonOutput::flush() {
  if (!pending_.empty()) writer_.write(1, std::exchange(pending_, std::string()));
}

void JsonOutput::notice(std::string line) {
  flush();
  writer_.write(2, std::move(line));
}

void JsonOutput::summary(const std::vector<fanout::WorkerResult>& results, double seconds, int exit_code) {
  pending_ += summary_json(results, seconds, exit_code);
  pending_ += '\n';
  flush();
}

}  // namespace tpush::output
