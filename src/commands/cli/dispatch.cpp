#include "tpush/commands/cli/dispatch.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <cstdio>
#include <unistd.h>

#include <string_view>

#include "tpush/commands/cli/interactive.h"
#include "tpush/commands/cli/subcommands.h"
#include "tpush/commands/plan/persist_run.h"
#include "tpush/commands/plan/targets.h"
#include "tpush/commands/process/process.h"
#include "tpush/commands/run.h"
#include "tpush/output/exit_codes.h"
#include "tpush/ssh/library.h"
#include "tpush/util/error.h"
#include "tpush/util/signals.h"
#include "tpush/util/string.h"

namespace tpush::commands {
namespace {

void setup_logging(int verbose) {
  spdlog::drop("tpush");  // a persist master sets it up for every run it serves
  auto logger = spdlog::stderr_color_st("tpush");
  logger->set_pattern("tpush: %l: %v");
  logger->set_level(verbose >= 2 ? spdlog::level::trace
                    : verbose == 1 ? spdlog::level::debug
                                   : spdlog::level::warn);
  spdlog::set_default_logger(logger);
}

bool stdin_is_dev_null() {
  struct stat in {}, null {};
  return fstat(STDIN_FILENO, &in) == 0 && S_ISCHR(in.st_mode) && stat("/dev/null", &null) == 0 &&
         in.st_rdev == null.st_rdev;
}

}  // namespace

int dispatch(int argc, const char* const* argv, const fanout::RunHost* host) {
  util::SignalScope signals;  // first: before any thread or child exists
  auto parsed = parse_options(argc, argv);
  if (!parsed) return output::exit_code::ok;
  Options& o = *parsed;
  o.run_host = host;
  setup_logging(o.verbose);
  ssh::Library libssh2;

  if (!o.subcommand.empty()) return find_subcommand(o.subcommand)->main(o, signals.fd());
  if (o.rest.empty() && wants_prompt(o)) return interactive_main(o, resolve_targets(o, signals.fd()), signals.fd());
  if (o.rest.empty())
    throw UsageError("no command given (e.g. tpush -w 'node[1-4]' uptime; see tpush --help); at a terminal, no "
                     "command starts a prompt, but stdin is not one");
  if (auto code = hand_to_master(o, signals.fd())) return *code;
  Targets targets = resolve_targets(o, signals.fd());
  RunPlan plan;
  plan.command = util::join(o.rest, " ");
  if (o.detach != !o.log_file.empty())
    throw UsageError("--detach and --log go together (e.g. --detach --log train.log 'python train.py')");
  if (o.detach) plan.command = detach_command(plan.command, o.log_file);
  plan.setup = {resolve_env(o.env), o.cd};
  plan.tty = o.tty;
  // Like ssh: a pipe or file on stdin goes to every worker; a terminal does
  // not. /dev/null would only be EOF, which every command gets anyway.
  plan.forward_stdin = !o.no_stdin && !isatty(STDIN_FILENO) && fcntl(STDIN_FILENO, F_GETFD) != -1 &&
                       !stdin_is_dev_null();
  plan.signal_fd = signals.fd();
  plan.refresh = tpu_refresher(o, targets, signals.fd());
  return run_on_workers(o, std::move(targets.workers), plan);
}

}  // namespace tpush::commands

namespace tpush::commands {

int run_command_line(int argc, const char* const* argv, const fanout::RunHost* host) {
  try {
    return dispatch(argc, argv, host);
  } catch (const NothingToDo& e) {
    std::fprintf(stderr, "tpush: %s\n", e.what());
    return output::exit_code::ok;
  } catch (const Interrupted& e) {
    std::fprintf(stderr, "tpush: interrupted: %s\n", e.what());
    return output::exit_code::interrupted;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "tpush: error: %s\n", e.what());
    return output::exit_code::usage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tpush: error: %s\n", e.what());
    return output::exit_code::setup_failed;
  }
}

}  // namespace tpush::commands
