#include <CLI/CLI.hpp>

#include <iostream>

#include "tpush/commands/subcommands.h"
#include "tpush/commands/targets.h"
#include "tpush/commands/workers.h"
#include "tpush/util/environment.h"

namespace tpush::commands {

int workers_main(Options& o, int signal_fd) {
  bool json = false;
  SubcommandSpec spec;
  spec.description = "list the workers tpush resolved, and where each came from.";
  spec.takes_args = false;
  spec.add_own = [&json](CLI::App& app) { app.add_flag("--json", json, "Print a JSON array"); };
  if (!parse_subcommand(o, spec)) return 0;
  const Targets t = resolve_targets(o, signal_fd);
  return print_workers(t.workers, t.tpu ? &*t.tpu : nullptr, json, std::cout,
                       {o.user.empty() ? util::user_name() : o.user, o.port ? o.port : uint16_t{22}});
}

}  // namespace tpush::commands
