// Everything the command line can say, parsed but not yet acted on.
//
// One rule for options after a subcommand's name: the subcommand's own
// options come first, and a global option whose short or long name the
// subcommand uses for itself is available there by its other name only
// (`tpush logs -f FILE` follows; the fan-out is then --fanout; `tpush kill
// --tpu` is kill's flag; the TPU is then -t). Before the subcommand's name,
// every name is the global one.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tpush/fanout/run_host.h"

namespace CLI {
class App;
class Validator;
}

namespace tpush::commands {

// What the config file says about reaching workers (config_file.h): it ranks
// below the command line, the host list's user@/:port and ssh_config.
struct ReachDefaults {
  std::string user;
  uint16_t port = 0;
  std::vector<std::string> identities;
  std::string jump;
  std::optional<int> connect_timeout, alive_interval;
  std::optional<std::string> host_key_check;
};

// A group defined in the config file's [groups].
struct ConfigGroup {
  std::string name, hosts, where;
};

struct Options {
  // where
  std::vector<std::string> host_exprs;  // -w
  std::vector<std::string> excludes;    // -x
  std::vector<std::string> host_files;  // -H
  std::vector<std::string> tpus;        // -t
  std::vector<std::string> queued_resources;
  std::string zone, project, worker_selection = "all";
  bool internal_ip = false, refresh = false, fetch_host_keys = false, tunnel_through_iap = false;
  bool failed = false;                  // --failed: only what did not succeed last time here
  int gcloud_timeout = 60;
  // how
  std::string user;                     // -l
  uint16_t port = 0;                    // -p
  std::vector<std::string> identities;  // -i
  std::string jump;                     // -J [user@]host[:port][,more]
  std::size_t fanout = 0;               // -f, 0 = default
  // Unset: ssh_config's value, else tpush's default (10 s, 5 s, accept-new).
  std::optional<int> connect_timeout;
  std::optional<int> timeout;           // -u
  std::optional<int> alive_interval;
  std::optional<std::string> host_key_check;
  std::optional<std::string> ssh_config_file;  // -F FILE (none: no file)
  std::string persist;                  // --persist DURATION (persist_time() reads it)
  std::vector<std::string> ssh_options;        // -o Keyword=Value
  // -A / -a: forward the user's agent to the commands, or not, whatever
  // ForwardAgent says (as ssh's); both unset: ForwardAgent, else no.
  bool forward_agent = false, no_forward_agent = false;
  // The config file's `relay`: no turns cp's relaying off unless --relay asks.
  std::optional<bool> relay;
  // the remote side
  std::vector<std::string> env;         // -e NAME or NAME=VALUE
  std::string cd;                       // --cd DIR
  bool tty = false;                     // --tty: a pty per worker
  bool sudo = false;                    // --sudo (and kill --sudo): the command runs under sudo
  bool no_stdin = false;                // -n: do not forward stdin
  bool detach = false;                  // --detach: start in the background
  std::string log_file;                 // --log FILE (with --detach)
  // output
  std::string label = "host";
  bool no_prefix = false, raw = false, quiet = false, summary_always = false;
  int verbose = 0;
  std::string color = "auto";
  bool gather = false;                  // -b: each distinct output once, at the end
  std::optional<std::string> leader;    // --leader[=LABEL]: kFirstWorker when no LABEL
  bool json = false;                    // --json: JSON Lines on stdout
  bool diff = false;                    // --diff: the common output once, the others as diffs
  bool live = false;                    // --live: a full-screen row per worker
  bool brief_summary = false;           // not a flag: the prompt's summary (SummaryMode::brief)
  std::string out_dir;                  // --out-dir DIR
  bool fail_fast = false;               // --fail-fast
  // tpush's config file (config_file.h)
  std::string config_flag;              // --config FILE ("none": no file)
  std::filesystem::path config_file;    // the file read, if any
  std::string config_found_by;          // "--config", "TPUSH_CONFIG", "the default location"
  std::set<std::string> given;          // config keys given on the command line
  std::map<std::string, std::string> from_config;  // config key -> "FILE:LINE" that set it
  ReachDefaults reach_defaults;
  std::vector<ConfigGroup> config_groups;
  // tpush's own argv, -e values hidden (for the run record)
  std::string command_line;
  // tpush's argv as given (what a persist master is handed)
  std::vector<std::string> argv;
  // What a persist master (or the interactive prompt) lends the runs it
  // serves: kept sessions, its services, the client's terminal. Never set by
  // the command line.
  const fanout::RunHost* run_host = nullptr;
  // the subcommand ("workers", ...), if any
  std::string subcommand;
  // the remote command, or the subcommand's unparsed arguments
  std::vector<std::string> rest;
};

// Parses argv up to the remote command. When the first word after the options
// names a subcommand, `subcommand` is set and `rest` holds its raw arguments
// (parse them with parse_subcommand). Returns nullopt when it already printed
// what was asked (--help, --version). Throws UsageError for anything malformed.
std::optional<Options> parse_options(int argc, const char* const* argv);

// How a subcommand reads its arguments: its own options (added first, in a
// group of their own), then every global one (so `tpush cp -t mytpu f /dst`
// works), under the rule above. Its usage lines come from the subcommand table.
struct SubcommandSpec {
  std::string description;  // one paragraph for --help
  std::function<void(CLI::App&)> add_own;
  bool takes_args = true;   // positional arguments allowed
  // Set for a subcommand that runs no command --sudo could run as root: what
  // to do instead, for the usage error --sudo then is.
  std::string without_sudo;
};

// Parses o.rest for o.subcommand; returns its positional arguments, or nullopt
// when --help was printed. Throws UsageError.
std::optional<std::vector<std::string>> parse_subcommand(Options& o, const SubcommandSpec& spec);

// Parses one option as the command line would (`--fanout=64`) into `o`: the
// config file's values get the same checks. Throws UsageError with the reason.
void parse_one_option(Options& o, const std::string& long_name, const std::string& value);

// "tpush [OPTIONS] cp [-r] [-p] SRC... DEST", for messages (the first form).
std::string usage_of(const std::string& subcommand);

// Prints `tpush SUBCOMMAND --help` for a subcommand that takes no tpush options
// after its name (rsync: every word after it is rsync's).
void print_subcommand_help(const std::string& subcommand, const std::string& description);

// How long a persist master keeps the sessions after a run, and whether the
// user chose it: --persist, else TPUSH_PERSIST, else the config file's
// `persist`; else the default, kDefaultPersist for a run typed at a terminal
// (stdin and stderr are one: a person issuing a string of commands) and off
// for scripts, pipes and cron. UsageError when TPUSH_PERSIST is not a duration.
struct PersistTime {
  std::chrono::seconds idle{0};
  bool chosen = false;  // said by the user, not the default
};
PersistTime persist_time(const Options& o);
inline constexpr std::chrono::minutes kDefaultPersist{10};

// --leader without =LABEL (no host name starts with '@').
inline constexpr const char* kFirstWorker = "@first";

// How a number option's value is checked and read (CLI11's transform()):
// digits (with `fraction`, one '.' may come too) from `low` to `high`, read in
// decimal (022 is 22, as ssh -p reads it). Its message names the value and the
// bound: "'x' is not a whole number from 1 to 65535", "99999 is above 65535".
CLI::Validator number_from(double low, double high, bool fraction = false);

// Limit on concurrent sessions when -f is not given.
inline constexpr std::size_t default_fanout_limit = 1024;

}  // namespace tpush::commands
