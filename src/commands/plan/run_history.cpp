#include "tpush/commands/plan/run_history.h"

#include <openssl/evp.h>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <ctime>

#include "tpush/output/summary.h"
#include "tpush/util/environment.h"
#include "tpush/util/file.h"

namespace tpush::commands {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr int kVersion = 1;

std::string hex_sha256(std::string_view text) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  EVP_Digest(text.data(), text.size(), md, &len, EVP_sha256(), nullptr);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned i = 0; i < 8 && i < len; ++i) out += {kHex[md[i] >> 4], kHex[md[i] & 15]};
  return out;
}

fs::path record_path(const std::string& target) { return history_dir() / "runs" / (hex_sha256(target) + ".json"); }

std::string now_iso() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

json to_json(const RunRecord& r) {
  json workers = json::array();
  for (const auto& e : r.workers)
    workers.push_back({{"label", e.label}, {"outcome", e.outcome}, {"reason", e.reason}, {"exit_status", e.exit_status}});
  return {{"version", kVersion}, {"target", r.target},     {"command_line", r.command_line},
          {"time", r.time},      {"seconds", r.seconds},   {"exit_code", r.exit_code},
          {"workers", workers}};
}

std::optional<RunRecord> read_record(const fs::path& path) {
  const auto text = util::read_file(path);
  if (!text) return std::nullopt;
  try {
    const json j = json::parse(*text);
    if (j.value("version", 0) != kVersion) return std::nullopt;
    RunRecord r;
    r.target = j.at("target").get<std::string>();
    r.command_line = j.value("command_line", "");
    r.time = j.value("time", "");
    r.seconds = j.value("seconds", 0.0);
    r.exit_code = j.value("exit_code", 0);
    for (const auto& w : j.at("workers"))
      r.workers.push_back({w.at("label").get<std::string>(), w.at("outcome").get<std::string>(),
                           w.value("reason", ""), w.value("exit_status", -1)});
    return r;
  } catch (const json::exception& e) {
    spdlog::warn("ignoring {}: not a tpush run record ({}); it is rewritten by the next run", path.string(), e.what());
    return std::nullopt;
  }
}

void write_record(const fs::path& path, const RunRecord& r) {
  const std::string text = record_json(r);
  if (const std::string err = util::write_file_atomic(path, text); !err.empty())
    spdlog::warn("could not record this run in {}: {} (--failed and tpush last will not know it)", path.string(), err);
}

}  // namespace

fs::path history_dir() { return util::xdg_dir("XDG_STATE_HOME", ".local/state"); }

std::string target_of(const Options& o) {
  std::string out;
  auto add = [&](const std::string& flag, const std::string& value) {
    out += (out.empty() ? "" : " ") + flag + " " + value;
  };
  for (const auto& v : o.host_exprs) add("-w", v);
  for (const auto& v : o.excludes) add("-x", v);
  for (const auto& v : o.host_files) {
    std::error_code ec;
    const fs::path abs = fs::absolute(v, ec);
    add("-H", ec ? v : abs.lexically_normal().string());
  }
  for (const auto& v : o.tpus) add("-t", v);
  for (const auto& v : o.queued_resources) add("--queued-resource", v);
  if (!o.zone.empty()) add("--zone", o.zone);
  if (!o.project.empty()) add("--project", o.project);
  if (o.worker_selection != "all") add("--worker", o.worker_selection);
  if (o.label != "host") add("--label", o.label);
  return out;
}

void record_run(const Options& o, const std::vector<std::string>& labels,
                const std::vector<fanout::WorkerResult>& results, double seconds, int exit_code) {
  RunRecord run;
  run.target = target_of(o);
  run.command_line = o.command_line;
  run.time = now_iso();
  run.seconds = seconds;
  run.exit_code = exit_code;
  for (std::size_t i = 0; i < results.size() && i < labels.size(); ++i)
    run.workers.push_back({labels[i], fanout::outcome_name(results[i].outcome), results[i].reason,
                           results[i].exit_status});
  write_record(history_dir() / "last.json", run);

  // The target's record: this run's workers replace their earlier entries.
  RunRecord merged = run;
  if (o.failed) {
    if (auto old = target_record(run.target)) {
      merged.workers = old->workers;
      for (const auto& e : run.workers) {
        auto it = std::find_if(merged.workers.begin(), merged.workers.end(),
                               [&](const RunRecord::Entry& m) { return m.label == e.label; });
        if (it != merged.workers.end()) *it = e;
        else merged.workers.push_back(e);
      }
    }
  }
  write_record(record_path(run.target), merged);
}

std::optional<RunRecord> target_record(const std::string& target) {
  auto r = read_record(record_path(target));
  if (r && r->target != target) return std::nullopt;  // a hash collision: not this target's
  return r;
}

std::optional<RunRecord> last_run() { return read_record(history_dir() / "last.json"); }

std::vector<std::string> not_ok_labels(const RunRecord& r) {
  std::vector<std::string> out;
  for (const auto& e : r.workers)
    if (e.outcome != fanout::outcome_name(fanout::Outcome::ok)) out.push_back(e.label);
  return out;
}

std::string record_json(const RunRecord& r) {
  // Bytes that are not UTF-8 (a reason quoting a worker) are replaced, not fatal.
  return to_json(r).dump(1, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string describe_run(const RunRecord& r) {
  std::vector<fanout::WorkerResult> results;
  std::vector<std::string> labels;
  for (const auto& e : r.workers) {
    fanout::WorkerResult w;
    w.outcome = fanout::outcome_from_name(e.outcome).value_or(fanout::Outcome::failed);
    w.reason = e.reason;
    w.exit_status = e.exit_status;
    results.push_back(std::move(w));
    labels.push_back(e.label);
  }
  std::string out = "tpush: last run " + r.time + ": " + r.command_line + "\n";
  out += output::format_summary(results, labels, r.seconds, output::SummaryMode::automatic);
  out += "tpush: it exited " + std::to_string(r.exit_code) + "\n";
  return out;
}

}  // namespace tpush::commands
