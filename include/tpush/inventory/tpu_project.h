// A TPU's project as tpush reads it: its metadata (`gcloud compute project-info
// describe`, for OS Login when the TPU's own metadata does not say), asked at
// most once per project per run however many TPUs of the project are resolved
// (a queued resource's 16 slices are one call), from several threads at once.
#pragma once

#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "tpush/inventory/gcloud.h"

namespace tpush::inventory {

struct ProjectInfoAnswer {
  std::optional<std::string> json;  // the Project resource, verbatim
  // When the API said no (no compute.projects.get permission, the Compute API
  // not enabled, no such project): gcloud's one-line summary. An answer that
  // will not change by asking again, so the cache keeps it with the TPU.
  std::string refused;
  // Any other failure (a timeout, the network): gcloud's summary; not kept.
  std::string failed;
};

class ProjectInfoCalls {
 public:
  ProjectInfoCalls(std::chrono::seconds timeout, int interrupt_fd) : timeout_(timeout), interrupt_fd_(interrupt_fd) {}
  ~ProjectInfoCalls();  // waits for calls still running
  ProjectInfoCalls(const ProjectInfoCalls&) = delete;
  ProjectInfoCalls& operator=(const ProjectInfoCalls&) = delete;

  // Starts the call for `project` in the background unless it was started.
  void start(const std::string& project);
  // Its answer, starting the call if need be and waiting for it. Throws what
  // run_gcloud throws (GcloudInterrupted, SetupError when gcloud cannot start).
  ProjectInfoAnswer get(const std::string& project);

 private:
  std::shared_future<ProjectInfoAnswer> call(const std::string& project);

  std::chrono::seconds timeout_;
  int interrupt_fd_;
  std::mutex mutex_;
  std::map<std::string, std::shared_future<ProjectInfoAnswer>> calls_;
};

}  // namespace tpush::inventory
