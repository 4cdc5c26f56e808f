// The subcommand table: what `tpush --help` lists, what each usage line says,
// and which entry point runs it. Each entry point parses o.rest
// (parse_subcommand), resolves the targets, runs, and returns tpush's exit code.
#pragma once

#include <span>
#include <string_view>

#include "tpush/commands/cli/options.h"

namespace tpush::commands {

struct Subcommand {
  std::string_view name;
  // What follows "tpush [OPTIONS] "; some have two forms (kill).
  std::span<const std::string_view> usage;
  std::string_view summary;  // one line for tpush --help
  int (*main)(Options& o, int signal_fd);
};

std::span<const Subcommand> subcommands();
const Subcommand* find_subcommand(std::string_view name);

int workers_main(Options& o, int signal_fd);
// `tpush last`: the last run's summary (see run_history.h).
int last_main(Options& o, int signal_fd);
// `tpush config`: the config file, groups, and each setting with its origin.
int config_main(Options& o, int signal_fd);

}  // namespace tpush::commands
