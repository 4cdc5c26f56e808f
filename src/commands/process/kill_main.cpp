#include <CLI/CLI.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include "tpush/commands/plan/persist_run.h"
#include "tpush/commands/plan/targets.h"
#include "tpush/commands/process/process.h"
#include "tpush/commands/run.h"
#include "tpush/util/environment.h"
#include "tpush/util/error.h"

namespace tpush::commands {

int kill_main(Options& o, int signal_fd) {
  std::string signal = "TERM";
  double grace = 5;
  bool sudo = false, tpu = false;
  SubcommandSpec spec;
  spec.description =
      "signal every process whose full command line matches the extended regex PATTERN (pkill -f; never "
      "tpush's own shell), then KILL what is left after the grace. With --tpu (a flag here: name the TPU "
      "with -t): stop whatever holds /dev/accel* or /dev/vfio/*, wait until they are free, remove "
      "/tmp/libtpu_lockfile and /tmp/tpu_logs. No match is not a failure.";
  spec.add_own = [&](CLI::App& app) {
    app.add_option("-s,--signal", signal, "Signal to send first: TERM (default), INT, HUP, KILL, USR1, 15, ...")
        ->option_text("SIG");
    app.add_option("--grace", grace, "Seconds to wait before KILL (default 5)")
        ->option_text("SECONDS")
        ->transform(number_from(0, 86400, true));
    app.add_flag("--sudo", sudo,
                 "Run as root under sudo (as tpush --sudo): other users' processes and files too");
    app.add_flag("--tpu", tpu, "Free the TPU instead of matching a PATTERN (name the TPU with -t)");
  };
  const auto args = parse_subcommand(o, spec);
  if (!args) return 0;
  if (auto code = hand_to_master(o, signal_fd)) return *code;

  const auto sig = signal_name(signal);
  if (!sig) throw UsageError("unknown signal '" + signal + "' for 'tpush kill' (try TERM, INT, HUP, KILL, USR1)");
  KillSpec ks;
  ks.signal = *sig;
  ks.grace = grace;
  ks.all_users = sudo;
  o.sudo = o.sudo || sudo;
  ks.client = local_client(o);

  RunPlan plan;
  if (tpu) {
    if (!args->empty())
      throw UsageError("'tpush kill --tpu' takes no PATTERN (got '" + args->front() +
                       "'; to pick the TPU use -t NAME)");
    TpuKillSpec ts;
    ts.kill = ks;
    ts.devices = util::env_value("TPUSH_TPU_DEVICES");
    ts.lockfiles = util::env_value("TPUSH_TPU_LOCKFILES");
    plan.command = tpu_kill_script(ts);
  } else {
    if (args->empty())
      throw UsageError("'tpush kill' needs a PATTERN (or --tpu); see tpush kill --help");
    if (args->size() > 1)
      throw UsageError("'tpush kill' takes one PATTERN, got " + std::to_string(args->size()) +
                       " words (quote it: tpush kill '" + args->at(0) + " " + args->at(1) + "')");
    const std::string& pattern = args->front();
    if (pattern.empty()) throw UsageError("'tpush kill': the PATTERN is empty");
    if (const std::string err = pattern_error(pattern); !err.empty())
      throw UsageError("'tpush kill': PATTERN '" + pattern + "' is not an extended regex: " + err);
    plan.command = kill_script(pattern, ks);
  }
  Targets t = resolve_targets(o, signal_fd);
  plan.signal_fd = signal_fd;
  plan.refresh = tpu_refresher(o, t, signal_fd);
  return run_on_workers(o, std::move(t.workers), plan);
}

}  // namespace tpush::commands
