#include "tpush/inventory/gcloud.h"

#include "tpush/util/child_process.h"
#include "tpush/util/error.h"
#include "tpush/util/string.h"

namespace tpush::inventory {
namespace {

bool contains(const std::string& haystack, const char* needle) {
  return haystack.find(needle) != std::string::npos;
}

std::string where(const GcloudSubject& s) {
  std::string out;
  if (!s.project.empty()) out += "project " + s.project;
  if (s.zones_tried.size() == 1) out += (out.empty() ? "" : ", ") + std::string("zone ") + s.zones_tried[0];
  return out;
}

constexpr std::size_t kSummaryMax = 240;

// `line` cut to at most `max` characters after its last whole sentence that
// fits, else after its last whole word, with "..." for what was left out.
std::string cut_at_sentence(std::string line, std::size_t max) {
  if (line.size() <= max) return line;
  if (const std::size_t end = line.rfind(". ", max - 1); end != std::string::npos && end > 0)
    return line.substr(0, end + 1);
  std::size_t space = line.rfind(' ', max - 3);
  if (space == std::string::npos || space == 0) space = max - 3;
  return line.substr(0, space) + "...";
}

}  // namespace

std::string GcloudResult::command_line() const { return "gcloud " + util::join(args, " "); }

GcloudResult run_gcloud(const std::vector<std::string>& args, std::chrono::seconds timeout,
                        int interrupt_fd) {
  GcloudResult result;
  result.args = args;
  result.timeout = timeout;

  const auto exe = util::find_program("gcloud");
  if (exe.empty()) {
    throw SetupError(
        "gcloud not found on PATH: install the Google Cloud CLI "
        "(https://cloud.google.com/sdk/docs/install) or name the workers with -w instead of -t");
  }
  util::ChildSpec spec;
  spec.program = exe;
  spec.args = args;
  spec.env = {"CLOUDSDK_CORE_DISABLE_PROMPTS=1"};  // never wait for a y/N answer
  util::CapturedRun run;
  try {
    run = util::run_captured(spec, timeout, interrupt_fd);
  } catch (const SetupError& e) {
    throw SetupError(std::string(e.what()) + " (check that gcloud is installed and executable)");
  }
  result.timed_out = run.timed_out;
  result.interrupted = run.interrupted;
  result.exit_code = run.exit_code.value_or(-1);
  result.out = std::move(run.out);
  result.err = std::move(run.err);
  if (run.interrupted) throw GcloudInterrupted("interrupted while running " + result.command_line());
  return result;
}

GcloudFailure classify_gcloud_failure(const GcloudResult& r) {
  if (r.timed_out) return GcloudFailure::timed_out;
  const std::string& e = r.err;
  if (contains(e, "You do not currently have an active account selected") ||
      contains(e, "Reauthentication failed") ||
      contains(e, "There was a problem refreshing your current auth tokens") ||
      contains(e, "does not have any valid credentials") ||
      contains(e, "Please run:\n\n  $ gcloud auth login")) {
    return GcloudFailure::not_logged_in;
  }
  if (contains(e, "SERVICE_DISABLED") || contains(e, "has not been used in project") ||
      (contains(e, "API [") && contains(e, "not enabled on project"))) {
    return GcloudFailure::api_disabled;
  }
  if (contains(e, "NOT_FOUND") || contains(e, "was not found")) return GcloudFailure::not_found;
  // The Compute API says "Could not fetch resource:\n - Required 'compute.projects.get'
  // permission for 'projects/P'".
  if (contains(e, "PERMISSION_DENIED") || contains(e, "does not have permission") ||
      contains(e, "Permission denied") || (contains(e, "Required '") && contains(e, "' permission for '"))) {
    return GcloudFailure::permission_denied;
  }
  return GcloudFailure::other;
}

std::string gcloud_error_summary(const std::string& err) {
  // gcloud prints "ERROR: (gcloud.compute.tpus.tpu-vm.describe) TEXT", then details.
  std::string line;
  std::size_t start = err.find("ERROR:");
  if (start == std::string::npos) start = 0;
  std::size_t end = err.find('\n', start);
  line = err.substr(start, end == std::string::npos ? std::string::npos : end - start);
  // The Compute API's "Could not fetch resource:" puts the cause on the next line,
  // after " - ".
  if (!line.empty() && line.back() == ':' && end != std::string::npos && err.compare(end + 1, 3, " - ") == 0) {
    const std::size_t detail_end = err.find('\n', end + 1);
    line += " " + err.substr(end + 4, detail_end == std::string::npos ? std::string::npos : detail_end - end - 4);
  }
  if (line.rfind("ERROR: ", 0) == 0) line.erase(0, 7);
  if (!line.empty() && line[0] == '(') {
    if (auto close = line.find(") "); close != std::string::npos) line.erase(0, close + 2);
  }
  // The sentence on the credentials ("This command is authenticated as ACCOUNT
  // ...", "... authenticated with an access token from FILE ...", "...
  // unauthenticated because ...") is noise in a one-line message.
  if (auto pos = line.find(". This command is "); pos != std::string::npos) line.erase(pos + 1);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
  return cut_at_sentence(line, kSummaryMax);
}

std::string gcloud_failure_message(const GcloudResult& r, const GcloudSubject& s) {
  const std::string thing = s.kind + " " + s.name;
  const std::string project_flag = s.project.empty() ? "" : " --project " + s.project;
  switch (classify_gcloud_failure(r)) {
    case GcloudFailure::not_found: {
      std::string msg = thing + " not found";
      if (!s.project.empty()) msg += " in project " + s.project;
      if (!s.zones_tried.empty()) {
        msg += " (zones tried: " + util::join(s.zones_tried, ", ");
        if (!s.zone_origin.empty()) msg += ", from " + s.zone_origin;
        msg += ")";
      }
      std::string list_cmd = s.kind == "TPU" ? "gcloud compute tpus tpu-vm list"
                                             : "gcloud compute tpus queued-resources list";
      return msg + ": check the name or pass --zone ZONE (see " + list_cmd + " --zone ZONE" +
             project_flag + ")";
    }
    case GcloudFailure::permission_denied:
      return "permission denied reading " + thing + (where(s).empty() ? "" : " (" + where(s) + ")") +
             ": " + gcloud_error_summary(r.err) +
             " (check the active account with gcloud auth list; it needs e.g. roles/tpu.viewer)";
    case GcloudFailure::api_disabled:
      return "the Cloud TPU API is not enabled" +
             (s.project.empty() ? std::string() : " in project " + s.project) +
             ": enable it with gcloud services enable tpu.googleapis.com" + project_flag;
    case GcloudFailure::not_logged_in:
      return "gcloud is not logged in (no active account): run gcloud auth login, or gcloud config "
             "set account ACCOUNT";
    case GcloudFailure::timed_out:
      return r.command_line() + " timed out after " + std::to_string(r.timeout.count()) +
             "s: check the network and that gcloud works when run by hand, or raise "
             "--gcloud-timeout";
    case GcloudFailure::other:
      break;
  }
  std::string summary = gcloud_error_summary(r.err);
  return r.command_line() + " failed (exit " + std::to_string(r.exit_code) + ")" +
         (summary.empty() ? std::string() : ": " + summary);
}

void throw_gcloud_failure(const GcloudResult& result, const GcloudSubject& subject) {
  throw SetupError(gcloud_failure_message(result, subject));
}

std::optional<std::string> gcloud_config_value(const std::string& key, std::chrono::seconds timeout,
                                               int interrupt_fd) {
  GcloudResult r = run_gcloud({"config", "get-value", key}, timeout, interrupt_fd);
  if (!r.ok()) {
    GcloudSubject subject{"gcloud property", key, "", {}, ""};
    throw_gcloud_failure(r, subject);
  }
  std::string value = r.out;
  while (!value.empty() && (value.back() == '\n' || value.back() == '\r' || value.back() == ' ')) {
    value.pop_back();
  }
  if (value.empty() || value == "(unset)") return std::nullopt;
  return value;
}

}  // namespace tpush::inventory
