#include "tpush/commands/options.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>

#include "tpush/ssh/library.h"
#include "tpush/util/error.h"

namespace tpush::commands {
namespace {

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

// "unknown option '--fanuot' (did you mean '--fanout'?)"
std::string unknown_option_message(const CLI::App& app, const std::string& arg) {
  const std::string name = arg.substr(0, arg.find('='));
  std::string best;
  std::size_t best_d = 3;
  for (const CLI::Option* opt : app.get_options()) {
    for (const auto& l : opt->get_lnames()) {
      const std::size_t d = edit_distance(name, "--" + l);
      if (d < best_d) best_d = d, best = "--" + l;
    }
  }
  std::string msg = "unknown option '" + name + "'";
  if (!best.empty()) msg += " (did you mean '" + best + "'?)";
  else msg += " (see tpush --help)";
  return msg;
}

// One value per occurrence, so `-w a uptime` leaves `uptime` to the command.
CLI::Option* one_each(CLI::Option* o) {
  return o->allow_extra_args(false);
}

// "-f,--fanout", less a short name the subcommand already took for itself
// (logs -f is --follow; the fan-out is then --fanout only).
std::string names(const CLI::App& app, const std::string& short_and_long) {
  const auto comma = short_and_long.find(',');
  const std::string short_name = short_and_long.substr(0, comma);
  return app.get_option_no_throw(short_name) ? short_and_long.substr(comma + 1) : short_and_long;
}

// The options every form of tpush takes, bound to `o`.
void add_options(CLI::App& app, Options& o, bool& version) {
  auto* where = "Workers";
  one_each(app.add_option("-w", o.host_exprs, "Hosts: node[01-16],user@h:port,^FILE (repeatable)")
                            ->group(where));
  one_each(app.add_option("-x", o.excludes, "Exclude hosts (same syntax, repeatable)")->group(where));
  one_each(app.add_option(names(app, "-H,--hosts"), o.host_files, "Hosts file, one [user@]host[:port] per line")
                            ->group(where));
  one_each(app.add_option(names(app, "-t,--tpu"), o.tpus, "TPU VM name(s) to resolve through gcloud")
                            ->delimiter(',')
                            ->group(where));
  one_each(app.add_option("--queued-resource", o.queued_resources,
                                       "Queued resource: every worker of every slice")
                            ->delimiter(',')
                            ->group(where));
  app.add_option("--zone", o.zone, "TPU zone (else TPUSH_ZONE, CLOUDSDK_COMPUTE_ZONE, gcloud config)")->group(where);
  app.add_option("--project", o.project, "TPU project (else CLOUDSDK_CORE_PROJECT, gcloud config)")->group(where);
  app.add_option("--worker", o.worker_selection, "TPU workers: all, 0, 1,4 or 1-3 (default all)")->group(where);
  app.add_flag("--internal-ip", o.internal_ip, "Connect to TPU workers' internal addresses")->group(where);
  app.add_flag("--refresh", o.refresh, "Describe the TPU again instead of using the cache")->group(where);
  app.add_flag("--fetch-host-keys", o.fetch_host_keys,
               "Pin TPU workers' ed25519 host keys from gcloud guest attributes")->group(where);
  app.add_option("--gcloud-timeout", o.gcloud_timeout, "Seconds each gcloud call may take (default 60)")
      ->check(CLI::Range(1, 3600))
      ->group(where);

  auto* how = "Connection";
  app.add_option(names(app, "-l,--user"), o.user, "Remote user (default: user@ in the host, else $USER)")->group(how);
  app.add_option(names(app, "-p,--port"), o.port, "Remote port (default: host:port, else 22)")
      ->check(CLI::Range(1, 65535))
      ->group(how);
  one_each(app.add_option(names(app, "-i,--identity"), o.identities, "Private key file (repeatable)")->group(how));
  app.add_option(names(app, "-f,--fanout"), o.fanout, "Max concurrent sessions (default: all workers, up to 1024)")
      ->check(CLI::PositiveNumber)
      ->group(how);
  app.add_option("--connect-timeout", o.connect_timeout,
                 "Seconds for TCP connect + SSH handshake + auth (default 10)")
      ->check(CLI::Range(1, 86400))
      ->group(how);
  app.add_option(names(app, "-u,--timeout"), o.timeout, "Seconds a command may run on a worker (default: no limit)")
      ->check(CLI::Range(1, 31536000))
      ->group(how);
  app.add_option("--alive-interval", o.alive_interval,
                 "Keepalive seconds; a worker silent for 3 intervals is lost (default 5)")
      ->check(CLI::Range(1, 3600))
      ->group(how);
  app.add_option("--host-key-check", o.host_key_check,
                 "accept-new (default: record unknown keys), yes (unknown keys fail), or no "
                 "(DANGEROUS: no check at all, anyone on the path can impersonate a worker)")
      ->check(CLI::IsMember({"accept-new", "yes", "no"}))
      ->group(how);

  auto* remote = "Remote command";
  one_each(app.add_option(names(app, "-e,--env"), o.env,
                          "Export NAME (its value here) or NAME=VALUE to the command (repeatable; "
                          "values never appear in logs)")
               ->group(remote));
  app.add_option("--cd", o.cd, "Run the command in DIR on every worker")->group(remote);
  app.add_flag("--tty", o.tty,
               "Give each worker a pseudo-terminal: Ctrl-C and closing reach the remote process "
               "(stderr is merged into stdout)")
      ->group(remote);
  app.add_flag(names(app, "-n,--no-stdin"), o.no_stdin, "Do not send tpush's stdin to the workers")->group(remote);
  app.add_flag("--detach", o.detach,
               "Start the command in its own session on every worker and return (needs --log)")
      ->group(remote);
  app.add_option("--log", o.log_file, "With --detach: the file on each worker for the job's output")
      ->group(remote);

  auto* out = "Output";
  app.add_option("--label", o.label, "Prefix lines with the host (default) or the index: w0, w1, ...")
      ->check(CLI::IsMember({"host", "index"}))
      ->group(out);
  app.add_flag(names(app, "-N,--no-prefix"), o.no_prefix, "Print lines without the worker prefix")->group(out);
  app.add_flag(names(app, "-q,--quiet"), o.quiet, "No summary when every worker succeeded")->group(out);
  app.add_flag(names(app, "-S,--summary-always"), o.summary_always, "Summary line for every worker, ok ones too")->group(out);
  app.add_flag(names(app, "-v,--verbose"), o.verbose, "Debug log on stderr (repeat for more)")->group(out);
  app.add_option("--color", o.color, "auto (default; TTY only, honours NO_COLOR), always or never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->group(out);
  app.add_flag("--version", version, "Print tpush's and libssh2's versions");

}

void parse_or_throw(CLI::App& app, std::vector<std::string> args) {
  std::reverse(args.begin(), args.end());  // CLI11 takes a reversed vector
  app.parse(args);
}

}  // namespace

std::optional<Options> parse_options(int argc, const char* const* argv,
                                     const std::function<bool(const std::string&)>& is_subcommand) {
  Options o;
  bool version = false;
  CLI::App app{"tpush: run a command on every worker of a TPU pod or host list, at once\n\n"
               "Usage: tpush [OPTIONS] COMMAND...\n       tpush [OPTIONS] SUBCOMMAND [ARGS...]\n"
               "Subcommands (each takes these options too; see tpush SUBCOMMAND --help):\n"
               "  workers [--json]                   the resolved workers and where they came from\n"
               "  cp [-r] [-p] SRC... DEST           copy files to every worker\n"
               "  get [-r] REMOTE... LOCALDIR        gather files into LOCALDIR/<label>/\n"
               "  rsync [RSYNC OPTIONS] SRC DEST     rsync to/from every worker (remote side: :path)\n"
               "  kill [-s SIG] [--grace S] [--sudo] PATTERN | kill --tpu\n"
               "                                     stop matching processes / whatever holds the TPU\n"
               "  ps [--all-users] [PATTERN]         matching processes on every worker\n"
               "  logs [-f] [-n LINES] FILE          the end of FILE on every worker",
               "tpush"};
  app.prefix_command();  // options end at the first word of the remote command
  app.footer(
      "Exit status: 0 all ok; 1 a remote command failed; 255 a worker was unreachable, timed out\n"
      "or lost; 2 usage error; 130 interrupted; 141 output closed. See tpush(1).");
  add_options(app, o, version);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    std::cout << app.help();
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    throw UsageError(std::string(e.what()) + " (see tpush --help)");
  }
  if (version) {
    std::cout << "tpush " << TPUSH_VERSION << " (libssh2 " << ssh::libssh2_version() << ")\n";
    return std::nullopt;
  }
  o.rest = app.remaining();
  if (!o.rest.empty() && is_subcommand(o.rest.front())) {
    o.subcommand = o.rest.front();
    o.rest.erase(o.rest.begin());  // parsed later by parse_subcommand
  } else if (!o.rest.empty() && o.rest.front() == "--") {
    o.rest.erase(o.rest.begin());
  } else if (!o.rest.empty() && o.rest.front().size() > 1 && o.rest.front()[0] == '-') {
    throw UsageError(unknown_option_message(app, o.rest.front()));
  }
  return o;
}

std::optional<std::vector<std::string>> parse_subcommand(Options& o, const SubcommandSpec& spec) {
  bool version = false;
  std::vector<std::string> positionals;
  CLI::App app{spec.description + "\n\nUsage: tpush [OPTIONS] " + spec.usage, "tpush " + o.subcommand};
  if (spec.add_own) spec.add_own(app);  // first: its own short options win (cp -p)
  add_options(app, o, version);
  app.add_option("args", positionals, "")->group("");
  try {
    parse_or_throw(app, o.rest);
  } catch (const CLI::CallForHelp& e) {
    std::cout << app.help();
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    throw UsageError(std::string(e.what()) + " for 'tpush " + o.subcommand + "' (see tpush " +
                     o.subcommand + " --help)");
  }
  if (!spec.takes_args && !positionals.empty())
    throw UsageError("unexpected argument '" + positionals.front() + "' for 'tpush " + o.subcommand +
                     "' (usage: tpush [OPTIONS] " + spec.usage + ")");
  return positionals;
}

}  // namespace tpush::commands
