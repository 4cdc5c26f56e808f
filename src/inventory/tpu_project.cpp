#include "tpush/inventory/tpu_project.h"

#include <vector>

namespace tpush::inventory {
namespace {

ProjectInfoAnswer describe_project(const std::string& project, std::chrono::seconds timeout, int interrupt_fd) {
  const GcloudResult r = run_gcloud({"compute", "project-info", "describe", "--project", project, "--format=json"},
                                    timeout, interrupt_fd);
  ProjectInfoAnswer a;
  if (r.ok()) {
    a.json = r.out;
    return a;
  }
  std::string why = r.timed_out ? "timed out after " + std::to_string(r.timeout.count()) + "s"
                                : gcloud_error_summary(r.err);
  if (why.empty()) why = "exit " + std::to_string(r.exit_code);
  switch (classify_gcloud_failure(r)) {
    case GcloudFailure::permission_denied:
    case GcloudFailure::api_disabled:
    case GcloudFailure::not_found: a.refused = std::move(why); break;
    default: a.failed = std::move(why); break;
  }
  return a;
}

}  // namespace

ProjectInfoCalls::~ProjectInfoCalls() {
  for (auto& [project, answer] : calls_) answer.wait();
}

std::shared_future<ProjectInfoAnswer> ProjectInfoCalls::call(const std::string& project) {
  const std::lock_guard lock(mutex_);
  auto& answer = calls_[project];
  if (!answer.valid())
    answer = std::async(std::launch::async, describe_project, project, timeout_, interrupt_fd_).share();
  return answer;
}

void ProjectInfoCalls::start(const std::string& project) { call(project); }

ProjectInfoAnswer ProjectInfoCalls::get(const std::string& project) { return call(project).get(); }

}  // namespace tpush::inventory
