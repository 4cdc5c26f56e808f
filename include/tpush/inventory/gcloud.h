// Running the gcloud CLI: found on PATH, started through Boost.Process with an
// argument vector (never a shell), in its own process group, stdin from
// /dev/null, prompts disabled, bounded by a timeout; stdout, stderr and the
// exit code are captured. gcloud's failure texts are mapped to one-line
// SetupErrors that name the thing and the fix.
#pragma once

#include "tpush/util/error.h"

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace tpush::inventory {

struct GcloudResult {
  std::vector<std::string> args;  // without the leading "gcloud"
  int exit_code = -1;
  bool timed_out = false;
  bool interrupted = false;
  std::chrono::seconds timeout{0};
  std::string out, err;

  bool ok() const { return !timed_out && exit_code == 0; }
  std::string command_line() const;  // "gcloud compute tpus ..." for messages
};

// Thrown when the interrupt fd became readable while gcloud ran (Ctrl-C):
// gcloud was killed; the caller exits as interrupted (130).
class GcloudInterrupted : public Interrupted {
 public:
  using Interrupted::Interrupted;
};

// Runs `gcloud args...`. Throws SetupError when gcloud is not on PATH or
// cannot be started; a non-zero exit or a timeout is reported in the result
// (the child and its process group are killed on timeout). `interrupt_fd`
// (e.g. SignalScope's signalfd; -1 = none) is watched, never read: when it
// becomes readable gcloud is killed and GcloudInterrupted is thrown.
GcloudResult run_gcloud(const std::vector<std::string>& args, std::chrono::seconds timeout,
                        int interrupt_fd = -1);

// What a failed gcloud call was about, for the error message.
struct GcloudSubject {
  std::string kind;     // "TPU", "queued resource"
  std::string name;     // "mytpu"
  std::string project;  // may be ""
  std::vector<std::string> zones_tried;
  std::string zone_origin;  // where the zone came from: "--zone", "gcloud config compute/zone", ...
};

enum class GcloudFailure {
  not_found,
  permission_denied,
  api_disabled,
  not_logged_in,
  timed_out,
  other,
};

// Classifies a failed call by gcloud's stderr text.
GcloudFailure classify_gcloud_failure(const GcloudResult& result);

// The one-line message for a failed call (also used by tests).
std::string gcloud_failure_message(const GcloudResult& result, const GcloudSubject& subject);

// Throws SetupError(gcloud_failure_message(...)).
[[noreturn]] void throw_gcloud_failure(const GcloudResult& result, const GcloudSubject& subject);

// `gcloud config get-value KEY`: the value, or nullopt when unset. Throws
// SetupError when gcloud fails or times out.
std::optional<std::string> gcloud_config_value(const std::string& key, std::chrono::seconds timeout,
                                               int interrupt_fd = -1);

// The first line of gcloud's error text with the "ERROR: (gcloud.x.y) " prefix
// and the sentence on the credentials (". This command is authenticated as ...",
// "... with an access token from ...", "... unauthenticated because ...")
// removed, cut to a readable length after a whole sentence (or word, then
// "..."); "" when stderr is empty.
std::string gcloud_error_summary(const std::string& err);

}  // namespace tpush::inventory
