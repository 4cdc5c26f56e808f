#include "tpush/commands/dispatch.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <iostream>

#include "tpush/commands/options.h"
#include "tpush/commands/run.h"
#include "tpush/commands/workers.h"
#include "tpush/inventory/inventory.h"
#include "tpush/inventory/tpu.h"
#include "tpush/output/exit_codes.h"
#include "tpush/ssh/library.h"
#include "tpush/util/error.h"
#include "tpush/util/signals.h"
#include "tpush/util/system.h"

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

inventory::TpuQuery tpu_query(const Options& o) {
  inventory::TpuQuery q;
  q.tpus = o.tpus;
  q.queued_resources = o.queued_resources;
  q.zone = o.zone;
  q.project = o.project;
  q.worker_selection = o.worker_selection;
  q.internal_ip = o.internal_ip;
  q.refresh = o.refresh;
  q.fetch_host_keys = o.fetch_host_keys;
  q.gcloud_timeout = std::chrono::seconds(o.gcloud_timeout);
  return q;
}

// Every worker the command line names: host lists first, then TPUs.
struct Inventory {
  std::vector<inventory::Worker> workers;
  std::optional<inventory::TpuResolution> tpu;
};

Inventory resolve_inventory(const Options& o) {
  Inventory inv;
  inv.workers = inventory::workers_from_host_lists(o.host_exprs, o.host_files, o.excludes);
  inventory::apply_labels(inv.workers, o.label == "index" ? inventory::LabelMode::index
                                                          : inventory::LabelMode::host);
  if (!o.tpus.empty() || !o.queued_resources.empty()) {
    inv.tpu = inventory::resolve_tpus(tpu_query(o));
    for (const auto& w : inv.tpu->warnings) spdlog::warn("{}", w);
    spdlog::debug("workers from {}", inv.tpu->source);
    if (inv.workers.empty()) {
      inv.workers = std::move(inv.tpu->workers);
    } else {  // mixed sources: the TPU's origins no longer line up with the list
      inv.workers.insert(inv.workers.end(), inv.tpu->workers.begin(), inv.tpu->workers.end());
      inv.tpu.reset();
    }
  }
  return inv;
}

int workers_command(const Options& o, const Inventory& inv) {
  return print_workers(inv.workers, inv.tpu ? &*inv.tpu : nullptr, o.json, std::cout,
                       {o.user.empty() ? util::user_name() : o.user, o.port ? o.port : uint16_t{22}});
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
  Inventory inv = resolve_inventory(o);
  if (inv.workers.empty())
    throw UsageError("no workers: give hosts with -w EXPR or -H FILE, or a TPU with -t NAME");
  if (o.subcommand == "workers") return workers_command(o, inv);

  RunPlan plan;
  plan.command = join_command(o.rest);
  plan.signal_fd = signals.fd();
  if (inv.tpu && inv.tpu->from_cache) {
    // TPU addresses change after maintenance or recreation: a cached address
    // that cannot be reached earns one fresh describe before we give up.
    plan.refresh = [&o] {
      auto q = tpu_query(o);
      q.refresh = true;
      return inventory::resolve_tpus(q).workers;
    };
  }
  return run_on_workers(o, inv.workers, plan);
}

}  // namespace tpush::commands
