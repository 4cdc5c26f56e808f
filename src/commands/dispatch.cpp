#include "tpush/commands/dispatch.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "tpush/commands/options.h"
#include "tpush/commands/run.h"
#include "tpush/inventory/inventory.h"
#include "tpush/output/exit_codes.h"
#include "tpush/ssh/library.h"
#include "tpush/util/error.h"
#include "tpush/util/signals.h"

namespace tpush::commands {
namespace {

void setup_logging(int verbose) {
  auto logger = spdlog::stderr_color_st("tpush");
  logger->set_pattern("tpush: %l: %v");
  logger->set_level(verbose >= 2 ? spdlog::level::trace
                    : verbose == 1 ? spdlog::level::debug
                                   : spdlog::level::warn);
  spdlog::set_default_logger(logger);
}

std::string join_command(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

}  // namespace

int dispatch(int argc, const char* const* argv) {
  util::SignalScope signals;  // first: before any thread or child exists
  auto parsed = parse_options(argc, argv);
  if (!parsed) return exit_code::ok;
  Options& o = *parsed;
  setup_logging(o.verbose);
  ssh::Library libssh2;

  if (o.rest.empty())
    throw UsageError("no command given (e.g. tpush -w 'node[1-4]' uptime; see tpush --help)");

  auto workers = inventory::workers_from_host_lists(o.host_exprs, o.host_files, o.excludes);
  if (workers.empty())
    throw UsageError("no workers: give hosts with -w EXPR or -H FILE (or a TPU with -t NAME)");
  inventory::apply_labels(workers, o.label == "index" ? inventory::LabelMode::index
                                                      : inventory::LabelMode::host);
  return run_on_workers(o, workers, join_command(o.rest), signals.fd());
}

}  // namespace tpush::commands
