#include "tpush/commands/cli/options.h"

#include <CLI/CLI.hpp>

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <iostream>

#include "tpush/commands/cli/config_file.h"
#include "tpush/commands/cli/help.h"
#include "tpush/commands/cli/subcommands.h"
#include "tpush/ssh/library.h"
#include "tpush/util/environment.h"
#include "tpush/util/error.h"
#include "tpush/util/shell_quote.h"
#include "tpush/util/string.h"

namespace tpush::commands {
namespace {

constexpr const char* kTitle = "tpush: run a command on every worker of a TPU pod or host list, at once.";
constexpr const char* kFooter =
    "Exit status: 0 all ok; 1 a remote command failed; 255 a worker was unreachable, timed out or "
    "lost; 2 usage error; 130 interrupted; 141 output closed. See tpush(1).";

// "unknown option '--fanuot' (did you mean '--fanout'?)"
std::string unknown_option_message(const CLI::App& app, const std::string& arg) {
  const std::string name = arg.substr(0, arg.find('='));
  std::string best;
  std::size_t best_d = 3;
  for (const CLI::Option* opt : app.get_options()) {
    for (const auto& l : opt->get_lnames()) {
      const std::size_t d = util::edit_distance(name, "--" + l);
      if (d < best_d) best_d = d, best = "--" + l;
    }
  }
  std::string msg = "unknown option '" + name + "'";
  if (!best.empty()) msg += " (did you mean '" + best + "'?)";
  else msg += " (see tpush --help)";
  return msg;
}


// "-f,--fanout" less the names the subcommand already took for itself.
std::string free_names(const CLI::App& app, const std::string& names) {
  std::string out;
  std::size_t start = 0;
  while (start <= names.size()) {
    const auto comma = names.find(',', start);
    const std::string name = names.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!app.get_option_no_throw(name)) out += (out.empty() ? "" : ",") + name;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

// Adds options to `app` under the names the subcommand left free (free_names).
struct OptionAdder {
  CLI::App& app;

  template <typename T>
  CLI::Option* option(const std::string& names, T& value, const char* value_name, const char* text,
                      const char* group) const {
    return app.add_option(free_names(app, names), value, text)->option_text(value_name)->group(group);
  }
  CLI::Option* flag(const std::string& names, bool& value, const char* text, const char* group) const {
    return app.add_flag(free_names(app, names), value, text)->group(group);
  }
  // Repeatable: every occurrence adds to the list, before and after the
  // subcommand's name alike (a vector bound with add_option would be replaced
  // by the second parse). One value per occurrence, so `-w a uptime` leaves
  // `uptime` to the command; `split` also cuts each value at commas.
  CLI::Option* many(const std::string& names, std::vector<std::string>& list, const char* value_name,
                    const char* text, const char* group, bool split = false) const {
    auto* opt = app.add_option_function<std::vector<std::string>>(
        free_names(app, names),
        [&list](const std::vector<std::string>& values) { list.insert(list.end(), values.begin(), values.end()); },
        text);
    opt->option_text(value_name)->group(group)->allow_extra_args(false)->expected(1)->multi_option_policy(
        CLI::MultiOptionPolicy::TakeAll);
    if (split) opt->delimiter(',');
    return opt;
  }
};

// Workers: host lists, TPUs and how gcloud is asked.
void add_worker_options(const OptionAdder& add, Options& o) {
  const char* where = "Workers";
  add.many("-w", o.host_exprs, "HOSTS", "Hosts: node[01-16],user@h:port,^FILE (repeatable)", where);
  add.many("-x", o.excludes, "HOSTS", "Leave these hosts out (same syntax, repeatable)", where);
  add.many("-H,--hosts", o.host_files, "FILE", "Hosts file, one [user@]host[:port] per line", where);
  add.many("-t,--tpu", o.tpus, "NAME", "TPU VM name(s) to resolve through gcloud", where, true);
  add.many("--queued-resource", o.queued_resources, "NAME", "Queued resource: every worker of every slice", where,
           true);
  add.option("--zone", o.zone, "ZONE", "TPU zone (else TPUSH_ZONE, CLOUDSDK_COMPUTE_ZONE, gcloud config)", where);
  add.option("--project", o.project, "PROJECT", "TPU project (else CLOUDSDK_CORE_PROJECT, gcloud config)", where);
  add.option("--worker", o.worker_selection, "WORKERS", "TPU workers: all, 0, 1,4 or 1-3 (default all)", where);
  add.flag("--internal-ip", o.internal_ip, "Connect to TPU workers' internal addresses", where);
  add.flag("--tunnel-through-iap", o.tunnel_through_iap,
           "Reach TPU workers through IAP tunnels (gcloud compute start-iap-tunnel): no external IP needed", where);
  add.flag("--refresh", o.refresh, "Describe the TPU again instead of using the cache", where);
  add.flag("--failed", o.failed,
           "Only the workers that did not succeed in the last run on the same workers options (see tpush last)", where);
  add.flag("--fetch-host-keys", o.fetch_host_keys, "Pin TPU workers' ed25519 host keys from gcloud guest attributes",
           where);
  add.option("--gcloud-timeout", o.gcloud_timeout, "SECONDS", "Seconds each gcloud call may take (default 60)", where)
      ->transform(number_from(1, 3600));
}

// Connection: users, ports, keys, ssh_config, jump hosts, sessions and deadlines.
void add_connection_options(const OptionAdder& add, Options& o) {
  const char* how = "Connection";
  add.option("-l,--user", o.user, "USER", "Remote user where the host list names none (default: $USER)", how);
  add.option("-p,--port", o.port, "PORT", "Remote port where the host list names none (default: 22)", how)
      ->transform(number_from(1, 65535));
  add.many("-i,--identity", o.identities, "FILE", "Private key file (repeatable)", how);
  add.option("-F", o.ssh_config_file, "FILE",
             "ssh_config file to read instead of ~/.ssh/config and /etc/ssh/ssh_config (none: no file)", how);
  add.many("-o", o.ssh_options, "KEYWORD=VALUE", "An ssh_config line, before every file, as ssh -o (repeatable)", how);
  add.flag("-A", o.forward_agent,
           "Forward your ssh-agent to the commands, as ssh -A (ForwardAgent): anyone with root or your login on a "
           "worker can use your keys while the command runs",
           how);
  add.flag("-a", o.no_forward_agent, "Do not forward your ssh-agent, whatever ForwardAgent says (the default)", how);
  add.option("-J,--jump", o.jump, "[USER@]HOST[:PORT][,...]",
             "Reach the workers through these jump hosts (ProxyJump): one session per jump host carries "
             "every worker",
             how);
  add.option("-f,--fanout", o.fanout, "N", "Sessions at once (default: every worker, up to 1024)", how)
      ->transform(number_from(1, 1000000));
  add.option("--persist", o.persist, "DURATION",
             "Keep the sessions open DURATION (10m, 1h) after the run, in a background tpush that later runs on "
             "the same workers use (0: off; default: 10m typed at a terminal, else off; see tpush(1))",
             how)
      ->check(CLI::Validator(
          [](std::string& v) {
            return util::parse_duration(v) ? std::string() : "not a duration: '" + v + "' (e.g. 10m, 1h, 0)";
          },
          "DURATION"));
  add.option("--connect-timeout", o.connect_timeout, "SECONDS",
             "Seconds for TCP connect + SSH handshake + auth (default: ConnectTimeout, else 10)", how)
      ->transform(number_from(1, 86400));
  add.option("-u,--timeout", o.timeout, "SECONDS", "Seconds a command may run on a worker (default: no limit)", how)
      ->transform(number_from(1, 31536000));
  add.option("--alive-interval", o.alive_interval, "SECONDS",
             "Keepalive seconds; a worker silent for 3 intervals is lost (default: ServerAliveInterval, else 5)",
             how)
      ->transform(number_from(1, 3600));
  add.option("--host-key-check", o.host_key_check, "{accept-new,yes,no}",
             "accept-new (default, unless StrictHostKeyChecking says: record unknown keys), yes (unknown keys "
             "fail), or no (DANGEROUS: no check at all, anyone on the path can impersonate a worker)",
             how)
      ->check(CLI::IsMember({"accept-new", "yes", "no"}));
}

// Remote command: its environment, directory, terminal and stdin.
void add_remote_options(const OptionAdder& add, Options& o) {
  const char* remote = "Remote command";
  add.many("-e,--env", o.env, "NAME[=VALUE]",
           "Export NAME (its value here) or NAME=VALUE to the command (repeatable; values never appear in logs)",
           remote);
  add.option("--cd", o.cd, "DIR", "Run the command in DIR on every worker", remote);
  add.flag("--tty", o.tty,
           "Give each worker a pseudo-terminal: Ctrl-C and closing reach the remote process (stderr is merged "
           "into stdout)",
           remote);
  add.flag("--sudo", o.sudo,
           "Run the command as root under sudo; a password, if sudo asks for one, is asked once here and checked on "
           "one worker before the others",
           remote);
  add.flag("-n,--no-stdin", o.no_stdin, "Do not send tpush's stdin to the workers", remote);
  add.flag("--detach", o.detach, "Start the command in its own session on every worker and return (needs --log)",
           remote);
  add.option("--log", o.log_file, "FILE", "With --detach: the file on each worker for the job's output", remote);
}

// Output: prefixes, modes, files, summary and colour.
void add_output_options(const OptionAdder& add, Options& o) {
  const char* out = "Output";
  add.option("--label", o.label, "{host,index}", "Prefix lines with the host (default) or the index: w0, w1, ...", out)
      ->check(CLI::IsMember({"host", "index"}));
  add.flag("-N,--no-prefix", o.no_prefix, "Print lines without the worker prefix", out);
  add.flag("--raw", o.raw,
           "On a terminal too, print workers' bytes as they are (control characters and escape sequences unescaped)",
           out);
  add.flag("-q,--quiet", o.quiet, "No summary when every worker succeeded", out);
  add.flag("-S,--summary-always", o.summary_always, "Summary line for every worker, ok ones too", out);
  // Counted across both parses (before and after a subcommand's name).
  add.app
      .add_flag_function(free_names(add.app, "-v,--verbose"),
                         [&o](std::int64_t n) { o.verbose += static_cast<int>(n); },
                         "Debug log on stderr (repeat for more)")
      ->group(out);
  add.flag("-b,--gather", o.gather,
           "Print each distinct output once at the end, under the workers that printed it (as clush -b)", out);
  // A flag, so `--leader python train.py` leaves `python` to the command; a
  // worker is chosen with `--leader=LABEL`.
  add.app.add_flag(free_names(add.app, "--leader{" + std::string(kFirstWorker) + "}"), o.leader,
                   "Stream the first worker (--leader=LABEL: that one) live; show the others at the end, only where "
                   "they differ from it")
      ->option_text("[=LABEL]")
      ->group(out);
  add.flag("--diff", o.diff,
           "At the end, the most common output once, then every other as a unified diff against it (as clush --diff)",
           out);
  add.flag("--live", o.live,
           "On a terminal: full screen, a row per worker (state, time, exit, last line); q leaves it once the run ends",
           out);
  add.flag("--json", o.json, "JSON Lines on stdout: every line, every worker's outcome, a summary (see tpush(1))", out);
  add.option("--out-dir", o.out_dir, "DIR",
             "Also write each worker's output to DIR/LABEL.out and .err, and DIR/results.json", out);
  add.flag("--fail-fast", o.fail_fast, "Stop every worker as soon as one fails (non-zero exit, unreachable, lost)",
           out);
  add.option("--color", o.color, "{auto,always,never}",
             "auto (default; a terminal only, honours NO_COLOR), always or never", out)
      ->check(CLI::IsMember({"auto", "always", "never"}));
}

// The options every form of tpush takes, bound to `o`, group by group (the
// order --help shows them in).
void add_options(CLI::App& app, Options& o, bool& version) {
  const OptionAdder add{app};
  add_worker_options(add, o);
  add_connection_options(add, o);
  add_remote_options(add, o);
  add_output_options(add, o);
  add.option("--config", o.config_flag, "FILE",
             "tpush's config file (default: $TPUSH_CONFIG, else ~/.config/tpush/config; none: no file)", "General");
  add.flag("--version", version, "Print tpush's and libssh2's versions", "General");
}

// -h/--help, in the General group, after every other option.
void help_flag(CLI::App& app) { app.set_help_flag("-h,--help", "Print this help and exit")->group("General"); }

std::string subcommand_list() {
  constexpr std::size_t kMaxColumn = 32;  // a longer usage puts its summary on the next line
  std::size_t width = 0;
  for (const auto& s : subcommands())
    if (s.usage.front().size() <= kMaxColumn) width = std::max(width, s.usage.front().size());
  std::string out = "Subcommands (each takes the options below too; see tpush SUBCOMMAND --help):\n";
  const std::size_t text_column = 2 + width + 2;
  for (const auto& s : subcommands()) {
    const std::string first(s.usage.front());
    std::string line = "  " + first;
    if (first.size() > width) line += "\n" + std::string(text_column, ' ');
    else line += std::string(text_column - 2 - first.size(), ' ');
    out += line + wrap(s.summary, help_width(), text_column) + "\n";
  }
  return out;
}

HelpPage subcommand_page(const std::string& name, const std::string& description) {
  HelpPage page;
  page.title = "tpush " + name + ": " + description;
  if (const Subcommand* s = find_subcommand(name))
    for (auto u : s->usage) page.usage.push_back("tpush [OPTIONS] " + std::string(u));
  return page;
}

// argv as one line for the run record, the values of -e options (before the
// remote command, which starts at `command_start`) hidden: `-e TOKEN=...`.
std::string recorded_command_line(int argc, const char* const* argv, int command_start) {
  std::string out = "tpush";
  bool env_value_next = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i < command_start) {
      std::size_t hide_from = std::string::npos;
      if (env_value_next) hide_from = arg.find('=');
      else if (arg.rfind("--env=", 0) == 0) hide_from = arg.find('=', 6);
      else if (arg.size() > 2 && arg.rfind("-e", 0) == 0 && arg[2] != '-') hide_from = arg.find('=');
      env_value_next = arg == "-e" || arg == "--env";
      if (hide_from != std::string::npos) arg = arg.substr(0, hide_from + 1) + "...";
    }
    out += " " + util::shell_quote(arg);
  }
  return out;
}

// Notes which options the config file may set were given on this command line.
void record_given(const CLI::App& app, Options& o) {
  for (std::string_view key : config_keys()) {
    const CLI::Option* opt = app.get_option_no_throw("--" + std::string(key));
    if (opt != nullptr && opt->count() > 0) {
      o.given.emplace(key);
      o.from_config.erase(std::string(key));  // the command line wins
    }
  }
}

void parse_reversed(CLI::App& app, std::vector<std::string> args) {
  std::reverse(args.begin(), args.end());  // CLI11 takes a reversed vector
  app.parse(args);
}

}  // namespace

CLI::Validator number_from(double low, double high, bool fraction) {
  const auto shown = [](double x) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.15g", x);
    return std::string(buf);
  };
  return CLI::Validator(
      [=](std::string& value) -> std::string {
        // Digits only: no sign, space, hex, exponent, inf or nan, which CLI11 would read or refuse.
        const auto allowed = [&](char c) { return util::is_digit(c) || (fraction && c == '.'); };
        const bool digits = !value.empty() && util::is_digit(value.front()) && util::is_digit(value.back()) &&
                            std::all_of(value.begin(), value.end(), allowed) &&
                            std::count(value.begin(), value.end(), '.') <= 1;
        if (!digits)
          return "'" + value + "' is not a " + (fraction ? "number" : "whole number") + " from " + shown(low) +
                 " to " + shown(high);
        double x = 0;
        if (std::from_chars(value.data(), value.data() + value.size(), x).ec != std::errc())
          return value + " is above " + shown(high);  // more digits than a double holds
        if (x < low) return value + " is below " + shown(low);
        if (x > high) return value + " is above " + shown(high);
        // Decimal, as ssh reads -p 022: CLI11 would take a leading 0 for octal (022 = 18).
        const auto first = std::min(value.find_first_not_of('0'), value.size() - 1);
        if (!fraction || value[first] != '.') value.erase(0, first);
        return {};
      },
      "");
}

PersistTime persist_time(const Options& o) {
  // The command line and the config file both land in o.persist, the
  // environment's value having kept the config's out (apply_config).
  if (!o.persist.empty()) return {util::parse_duration(o.persist).value_or(std::chrono::seconds{0}), true};
  if (const auto env = util::env_value("TPUSH_PERSIST")) {
    const auto d = util::parse_duration(*env);
    if (!d) throw UsageError("TPUSH_PERSIST='" + *env + "' is not a duration (e.g. 10m, 1h, or 0 for off)");
    return {*d, true};
  }
  const bool typed = isatty(STDIN_FILENO) == 1 && isatty(STDERR_FILENO) == 1;
  return {typed ? std::chrono::seconds(kDefaultPersist) : std::chrono::seconds{0}, false};
}

std::string usage_of(const std::string& subcommand) {
  const Subcommand* s = find_subcommand(subcommand);
  return s ? "tpush [OPTIONS] " + std::string(s->usage.front()) : "tpush [OPTIONS] " + subcommand;
}

std::optional<Options> parse_options(int argc, const char* const* argv) {
  Options o;
  bool version = false;
  CLI::App app{"", "tpush"};
  app.prefix_command();  // options end at the first word of the remote command
  add_options(app, o, version);
  help_flag(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    HelpPage page;
    page.title = kTitle;
    page.usage = {"tpush [OPTIONS] COMMAND...", "tpush [OPTIONS] SUBCOMMAND [ARGS...]"};
    page.preface = subcommand_list();
    page.footer = kFooter;
    std::cout << format_help(app, page, help_width());
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    throw UsageError(std::string(e.what()) + " (see tpush --help)");
  }
  if (version) {
    std::cout << "tpush " << TPUSH_VERSION << " (libssh2 " << ssh::libssh2_version() << ")\n";
    return std::nullopt;
  }
  record_given(app, o);
  apply_config(o, load_config(o.config_flag));
  o.argv.assign(argv, argv + argc);
  o.rest = app.remaining();
  const bool subcommand = !o.rest.empty() && find_subcommand(o.rest.front());
  o.command_line = recorded_command_line(argc, argv, subcommand ? argc : argc - static_cast<int>(o.rest.size()));
  if (!o.rest.empty() && find_subcommand(o.rest.front())) {
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
  CLI::App app{"", "tpush " + o.subcommand};
  app.set_help_flag();  // added back, in its group, after the others
  if (spec.add_own) {
    spec.add_own(app);  // first: its names win
    for (CLI::Option* opt : app.get_options())
      if (opt->get_group() == "Options") opt->group(o.subcommand + " options");
  }
  add_options(app, o, version);
  help_flag(app);
  app.add_option("args", positionals, "")->group("");
  try {
    parse_reversed(app, o.rest);
  } catch (const CLI::CallForHelp&) {
    std::cout << format_help(app, subcommand_page(o.subcommand, spec.description), help_width());
    return std::nullopt;
  } catch (const CLI::ParseError& e) {
    throw UsageError(std::string(e.what()) + " for 'tpush " + o.subcommand + "' (see tpush " + o.subcommand +
                     " --help)");
  }
  if (version) {
    std::cout << "tpush " << TPUSH_VERSION << " (libssh2 " << ssh::libssh2_version() << ")\n";
    return std::nullopt;
  }
  if (o.sudo && !spec.without_sudo.empty())
    throw UsageError("tpush " + o.subcommand + " does not run as root with --sudo: " + spec.without_sudo);
  if (app.count("--config") > 0)
    throw UsageError("--config goes before the subcommand's name (tpush --config FILE " + o.subcommand + " ...)");
  record_given(app, o);
  if (!spec.takes_args && !positionals.empty())
    throw UsageError("unexpected argument '" + positionals.front() + "' for 'tpush " + o.subcommand +
                     "' (usage: " + usage_of(o.subcommand) + ")");
  return positionals;
}

void parse_one_option(Options& o, const std::string& long_name, const std::string& value) {
  bool version = false;
  CLI::App app{"", "tpush"};
  add_options(app, o, version);
  try {
    app.parse(std::vector<std::string>{"--" + long_name + "=" + value});
  } catch (const CLI::ParseError& e) {
    throw UsageError(e.what());
  }
}

void print_subcommand_help(const std::string& subcommand, const std::string& description) {
  Options o;
  bool version = false;
  CLI::App app{"", "tpush"};
  add_options(app, o, version);
  help_flag(app);
  HelpPage page = subcommand_page(subcommand, description);
  page.preface = wrap("tpush's options (below) go before '" + subcommand + "'; every word after it is " +
                          subcommand + "'s.",
                      help_width(), 0) +
                 "\n";
  std::cout << format_help(app, page, help_width());
}

}  // namespace tpush::commands
