#include "tpush/inventory/gcloud.h"

#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <fcntl.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/process.hpp>
#include <boost/process/extend.hpp>
#include <future>
#include <string_view>
#include <system_error>

#include "tpush/util/error.h"

namespace tpush::inventory {
namespace bp = boost::process;

namespace {

bool contains(const std::string& haystack, const char* needle) {
  return haystack.find(needle) != std::string::npos;
}

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out += sep;
    out += p;
  }
  return out;
}

std::string where(const GcloudSubject& s) {
  std::string out;
  if (!s.project.empty()) out += "project " + s.project;
  if (s.zones_tried.size() == 1) out += (out.empty() ? "" : ", ") + std::string("zone ") + s.zones_tried[0];
  return out;
}

}  // namespace

std::string GcloudResult::command_line() const { return "gcloud " + join(args, " "); }

GcloudResult run_gcloud(const std::vector<std::string>& args, std::chrono::seconds timeout,
                        int interrupt_fd) {
  GcloudResult result;
  result.args = args;
  result.timeout = timeout;

  boost::filesystem::path exe = bp::search_path("gcloud");
  if (exe.empty()) {
    throw SetupError(
        "gcloud not found on PATH: install the Google Cloud CLI "
        "(https://cloud.google.com/sdk/docs/install) or name the workers with -w instead of -t");
  }

  // The child's environment: ours, plus CLOUDSDK_CORE_DISABLE_PROMPTS=1 (never wait for
  // a y/N answer). Built here, before fork; the child only swaps the pointer.
  // (Boost 1.74's bp::environment reads past string ends when searching.)
  std::vector<std::string> env_strings;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    if (std::string_view(*e).rfind("CLOUDSDK_CORE_DISABLE_PROMPTS=", 0) != 0) env_strings.emplace_back(*e);
  }
  env_strings.emplace_back("CLOUDSDK_CORE_DISABLE_PROMPTS=1");
  std::vector<char*> env_ptrs;
  for (auto& e : env_strings) env_ptrs.push_back(e.data());
  env_ptrs.push_back(nullptr);
  char** child_env = env_ptrs.data();

  boost::asio::io_context ios;
  std::future<std::string> out_future, err_future;
  bp::child child;
  try {
    child = bp::child(exe, bp::args(args), bp::std_in < bp::null, bp::std_out > out_future,
                      bp::std_err > err_future, ios,
                      bp::extend::on_exec_setup([child_env](auto& exec) {
                        ::setpgid(0, 0);  // its own process group: a timeout kills all of it
                        sigset_t none;    // tpush blocks SIGINT/SIGTERM/SIGHUP and ignores
                        sigemptyset(&none);  // SIGPIPE; gcloud gets the defaults back
                        ::sigprocmask(SIG_SETMASK, &none, nullptr);
                        ::signal(SIGPIPE, SIG_DFL);
                        exec.env = child_env;
                      }));
  } catch (const std::system_error& e) {
    throw SetupError("cannot run " + exe.string() + ": " + e.what() +
                     " (check that gcloud is installed and executable)");
  }
  const pid_t pid = child.id();

  // Ctrl-C while gcloud runs: the caller's interrupt fd becomes readable (it is
  // only watched here, never read, so the caller still sees the signal).
  bool interrupted = false;
  std::optional<boost::asio::posix::stream_descriptor> interrupt;
  if (interrupt_fd >= 0) {
    int copy = ::fcntl(interrupt_fd, F_DUPFD_CLOEXEC, 0);
    if (copy >= 0) {
      interrupt.emplace(ios, copy);
      interrupt->async_wait(boost::asio::posix::stream_descriptor::wait_read,
                            [&interrupted](const boost::system::error_code& ec) {
                              if (!ec) interrupted = true;
                            });
    }
  }

  auto done = [&] {
    return out_future.wait_for(std::chrono::seconds(0)) == std::future_status::ready &&
           err_future.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  };
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done() && !interrupted && !ios.stopped()) {
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      result.timed_out = true;
      break;
    }
    ios.run_one_for(deadline - now);
  }
  if (result.timed_out || interrupted) {
    // Still running (or its pipes are still open): stop the whole group.
    ::kill(-pid, SIGKILL);
    std::error_code ignored;
    child.terminate(ignored);
  }
  if (interrupt) interrupt->cancel();
  ios.restart();
  ios.run_for(std::chrono::seconds(2));  // let the pipe readers see EOF
  std::error_code ec;
  child.wait(ec);
  result.interrupted = interrupted;
  if (!result.timed_out && !interrupted) result.exit_code = child.exit_code();
  if (out_future.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    try { result.out = out_future.get(); } catch (const std::exception&) {}
  }
  if (err_future.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
    try { result.err = err_future.get(); } catch (const std::exception&) {}
  }
  if (interrupted) throw GcloudInterrupted("interrupted while running " + result.command_line());
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
  if (contains(e, "PERMISSION_DENIED") || contains(e, "does not have permission") ||
      contains(e, "Permission denied")) {
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
  if (line.rfind("ERROR: ", 0) == 0) line.erase(0, 7);
  if (!line.empty() && line[0] == '(') {
    if (auto close = line.find(") "); close != std::string::npos) line.erase(0, close + 2);
  }
  // The account sentence is noise in a one-line message.
  if (auto pos = line.find(". This command is authenticated as"); pos != std::string::npos) {
    line.erase(pos + 1);
  }
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
  constexpr std::size_t kMax = 240;
  if (line.size() > kMax) line = line.substr(0, kMax - 3) + "...";
  return line;
}

std::string gcloud_failure_message(const GcloudResult& r, const GcloudSubject& s) {
  const std::string thing = s.kind + " " + s.name;
  const std::string project_flag = s.project.empty() ? "" : " --project " + s.project;
  switch (classify_gcloud_failure(r)) {
    case GcloudFailure::not_found: {
      std::string msg = thing + " not found";
      if (!s.project.empty()) msg += " in project " + s.project;
      if (!s.zones_tried.empty()) {
        msg += " (zones tried: " + join(s.zones_tried, ", ");
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
