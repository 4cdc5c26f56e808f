#include "tpush/commands/cli/config_file.h"

#include <cerrno>
#include <cstring>

#include "tpush/inventory/host_pattern.h"
#include "tpush/util/environment.h"
#include "tpush/util/error.h"
#include "tpush/util/file.h"
#include "tpush/util/string.h"

namespace tpush::commands {
namespace {

namespace fs = std::filesystem;
using std::string_view;

// What a key sets: an option itself (the command line overrides it), or a
// default for reaching workers (ranked below ssh_config by worker_reach).
enum class Rank { option, reach };

struct Key {
  string_view name;
  Rank rank;
  // Copies what parse_one_option put into `parsed` into `o`.
  void (*take)(Options& o, Options& parsed);
  // The value in effect for `tpush config` ("" when unset), and what applies then.
  std::string (*show)(const Options& o);
  string_view otherwise;
};

std::string number(const std::optional<int>& v) { return v ? std::to_string(*v) : ""; }
std::string yes_no(bool b) { return b ? "yes" : "no"; }
// A reach key shows the command line's value when given, else the config's.
template <typename T>
const T& pick(const Options& o, const char* key, const T& flag, const T& config) {
  return o.given.count(key) ? flag : config;
}

// The options people repeat. Not here: what says which workers (-w, -t, ...;
// groups are for that), what a single run is about (--tty, --json, -e, ...).
const Key kKeys[] = {
    {"user", Rank::reach, [](Options& o, Options& p) { o.reach_defaults.user = p.user; },
     [](const Options& o) { return pick(o, "user", o.user, o.reach_defaults.user); },
     "user@ in the host list, else ssh_config's User, else $USER"},
    {"port", Rank::reach, [](Options& o, Options& p) { o.reach_defaults.port = p.port; },
     [](const Options& o) {
       const uint16_t port = pick(o, "port", o.port, o.reach_defaults.port);
       return port ? std::to_string(port) : std::string();
     },
     ":port in the host list, else ssh_config's Port, else 22"},
    {"identity", Rank::reach,
     [](Options& o, Options& p) {
       o.reach_defaults.identities.insert(o.reach_defaults.identities.end(), p.identities.begin(),
                                          p.identities.end());
     },
     [](const Options& o) { return util::join(pick(o, "identity", o.identities, o.reach_defaults.identities), ", "); },
     "ssh_config's IdentityFile, else ~/.ssh/id_* and ~/.ssh/google_compute_engine"},
    {"jump", Rank::reach, [](Options& o, Options& p) { o.reach_defaults.jump = p.jump; },
     [](const Options& o) { return pick(o, "jump", o.jump, o.reach_defaults.jump); },
     "ssh_config's ProxyJump or ProxyCommand, else direct"},
    {"connect-timeout", Rank::reach, [](Options& o, Options& p) { o.reach_defaults.connect_timeout = p.connect_timeout; },
     [](const Options& o) {
       return number(pick(o, "connect-timeout", o.connect_timeout, o.reach_defaults.connect_timeout));
     },
     "ssh_config's ConnectTimeout, else 10"},
    {"alive-interval", Rank::reach, [](Options& o, Options& p) { o.reach_defaults.alive_interval = p.alive_interval; },
     [](const Options& o) { return number(pick(o, "alive-interval", o.alive_interval, o.reach_defaults.alive_interval)); },
     "ssh_config's ServerAliveInterval, else 5"},
    {"host-key-check", Rank::reach, [](Options& o, Options& p) { o.reach_defaults.host_key_check = p.host_key_check; },
     [](const Options& o) {
       return pick(o, "host-key-check", o.host_key_check, o.reach_defaults.host_key_check).value_or("");
     },
     "ssh_config's StrictHostKeyChecking, else accept-new"},
    {"persist", Rank::option, [](Options& o, Options& p) { o.persist = p.persist; },
     [](const Options& o) { return o.persist; }, "TPUSH_PERSIST, else 10m at a terminal, else 0 (off)"},
    {"fanout", Rank::option, [](Options& o, Options& p) { o.fanout = p.fanout; },
     [](const Options& o) { return o.fanout ? std::to_string(o.fanout) : std::string(); },
     "every worker at once, up to 1024"},
    {"timeout", Rank::option, [](Options& o, Options& p) { o.timeout = p.timeout; },
     [](const Options& o) { return number(o.timeout); }, "no limit"},
    {"zone", Rank::option, [](Options& o, Options& p) { o.zone = p.zone; },
     [](const Options& o) { return o.zone; }, "TPUSH_ZONE, else CLOUDSDK_COMPUTE_ZONE, else gcloud's config"},
    {"project", Rank::option, [](Options& o, Options& p) { o.project = p.project; },
     [](const Options& o) { return o.project; }, "CLOUDSDK_CORE_PROJECT, else gcloud's config"},
    {"gcloud-timeout", Rank::option, [](Options& o, Options& p) { o.gcloud_timeout = p.gcloud_timeout; },
     [](const Options& o) { return std::to_string(o.gcloud_timeout); }, ""},
    {"internal-ip", Rank::option, [](Options& o, Options& p) { o.internal_ip = p.internal_ip; },
     [](const Options& o) { return yes_no(o.internal_ip); }, ""},
    {"tunnel-through-iap", Rank::option, [](Options& o, Options& p) { o.tunnel_through_iap = p.tunnel_through_iap; },
     [](const Options& o) { return yes_no(o.tunnel_through_iap); }, ""},
    {"fetch-host-keys", Rank::option, [](Options& o, Options& p) { o.fetch_host_keys = p.fetch_host_keys; },
     [](const Options& o) { return yes_no(o.fetch_host_keys); }, ""},
    {"label", Rank::option, [](Options& o, Options& p) { o.label = p.label; },
     [](const Options& o) { return o.label; }, ""},
    {"color", Rank::option, [](Options& o, Options& p) { o.color = p.color; },
     [](const Options& o) { return o.color; }, ""},
    {"quiet", Rank::option, [](Options& o, Options& p) { o.quiet = p.quiet; },
     [](const Options& o) { return yes_no(o.quiet); }, ""},
    {"summary-always", Rank::option, [](Options& o, Options& p) { o.summary_always = p.summary_always; },
     [](const Options& o) { return yes_no(o.summary_always); }, ""},
    // cp's --relay and --no-relay, given, win over it.
    {"relay", Rank::option, [](Options& o, Options& p) { o.relay = p.relay; },
     [](const Options& o) { return o.relay ? yes_no(*o.relay) : std::string(); },
     "cp relays to 3 or more workers of a TPU slice from 4 MiB"},
};

const Key* find_key(string_view name) {
  for (const Key& k : kKeys)
    if (k.name == name) return &k;
  return nullptr;
}

// Options a config file cannot set, with why, so the message can say it.
string_view not_a_default(string_view key) {
  constexpr string_view kWorkers[] = {"w", "x", "H", "hosts", "tpu", "t", "queued-resource", "worker", "failed"};
  for (string_view k : kWorkers)
    if (k == key) return "it chooses the workers of one run; define a group in [groups] and use -w @GROUP";
  constexpr string_view kRun[] = {"tty", "no-stdin", "detach", "log", "env", "cd", "json", "gather", "leader",
                                  "out-dir", "fail-fast", "no-prefix", "raw", "verbose", "refresh", "config"};
  for (string_view k : kRun)
    if (k == key) return "it is about one run; give it on the command line";
  return {};
}

bool is_flag(string_view key) {
  constexpr string_view kFlags[] = {"internal-ip", "tunnel-through-iap", "fetch-host-keys", "quiet", "summary-always",
                                    "relay"};
  for (string_view f : kFlags)
    if (f == key) return true;
  return false;
}

// What CLI11 reads as a flag's value.
bool is_bool_word(const std::string& value) {
  const std::string v = util::ascii_lowercase(value);
  for (string_view w : {"yes", "no", "true", "false", "on", "off", "1", "0"})
    if (v == w) return true;
  return false;
}

// Blanks in tpush's config file: space, tab, and the CR of a CRLF line.
string_view trim_blanks(string_view s) { return util::trim(s, " \t\r"); }

// A line without its comment: `#` at the start, or after a blank.
string_view strip_comment(string_view line) {
  for (std::size_t i = 0; i < line.size(); ++i)
    if (line[i] == '#' && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t')) return line.substr(0, i);
  return line;
}

std::string did_you_mean(string_view key) {
  std::string best;
  std::size_t best_d = 3;
  for (const Key& k : kKeys) {
    const std::size_t d = util::edit_distance(key, k.name);
    if (d < best_d) best_d = d, best = std::string(k.name);
  }
  return best.empty() ? "" : " (did you mean '" + best + "'?)";
}

std::string known_keys() {
  std::string out;
  for (const Key& k : kKeys) out += (out.empty() ? "" : ", ") + std::string(k.name);
  return out;
}

// `~/x` -> $HOME/x, as ssh_config reads IdentityFile.
std::string expand_home(const std::string& value) {
  if (value == "~") return util::home_dir().string();
  if (value.rfind("~/", 0) == 0) return (util::home_dir() / value.substr(2)).string();
  return value;
}

}  // namespace

std::string ConfigFile::where(int line) const {
  return inventory::escape_for_message(file.string()) + ":" + std::to_string(line);
}

ConfigFile parse_config(string_view text, const fs::path& file) {
  ConfigFile config;
  config.file = file;
  bool in_groups = false;
  int line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const auto nl = text.find('\n');
    const string_view raw = text.substr(0, nl);
    text.remove_prefix(nl == string_view::npos ? text.size() : nl + 1);
    const string_view line = trim_blanks(strip_comment(raw));
    if (line.empty()) continue;
    const std::string where = config.where(line_no);
    const auto fail = [&](const std::string& what) { throw UsageError(where + ": " + what); };

    if (line.front() == '[') {
      if (line == "[groups]") in_groups = true;
      else fail(inventory::quote_for_message(line) + " is not a section tpush knows (the only one is [groups])");
      continue;
    }
    const auto eq = line.find('=');
    if (eq == string_view::npos)
      fail(inventory::quote_for_message(line) + " is not a setting (write KEY = VALUE, like 'fanout = 64'" +
           (in_groups ? ", or in [groups] NAME = HOSTS" : "") + ")");
    const std::string key(trim_blanks(line.substr(0, eq)));
    const std::string value(trim_blanks(line.substr(eq + 1)));
    if (key.empty()) fail("a setting needs a name before '=' (write KEY = VALUE)");
    if (in_groups) {
      config.groups.push_back({key, value, line_no});
      continue;
    }
    if (!find_key(key)) {
      const string_view why = not_a_default(key);
      if (!why.empty()) fail("'" + key + "' cannot be set in the config file: " + std::string(why));
      fail("unknown key " + inventory::quote_for_message(key) + did_you_mean(key) + "; the keys are " +
           known_keys());
    }
    if (value.empty()) fail(key + " needs a value (write " + key + " = VALUE, or remove the line)");
    config.settings.push_back({key, value, line_no});
  }
  return config;
}

ConfigFile load_config(const std::string& flag) {
  fs::path file;
  std::string found_by;
  if (!flag.empty()) {
    file = flag, found_by = "--config";
  } else if (auto env = util::env_value("TPUSH_CONFIG")) {
    file = *env, found_by = "TPUSH_CONFIG";
  } else {
    file = config_default_file(), found_by = "the default location";
  }
  if (file == "none") return ConfigFile{{}, found_by, {}, {}};
  const auto text = util::read_file(file);
  if (!text) {
    const int err = errno;
    if (found_by == "the default location" && err == ENOENT) return ConfigFile{};
    throw UsageError("cannot read config file " + inventory::quote_for_message(file.string()) + " (from " +
                     found_by + "): " + std::strerror(err) +
                     (err == ENOENT ? " (create it, or give --config none)" : ""));
  }
  ConfigFile config = parse_config(*text, file);
  config.found_by = found_by;
  return config;
}

void apply_config(Options& o, const ConfigFile& config) {
  o.config_file = config.file;
  o.config_found_by = config.found_by;
  std::set<std::string> seen;
  for (const ConfigEntry& e : config.settings) {
    const Key& key = *find_key(e.key);
    const std::string where = config.where(e.line);
    if (!seen.insert(e.key).second && e.key != "identity")
      throw UsageError(where + ": " + e.key + " is set twice (keep one line; identity is the one key that repeats)");
    if (o.given.count(e.key)) continue;  // the command line wins
    if (e.key == "zone" && util::env_value("TPUSH_ZONE")) continue;  // so does the environment
    if (e.key == "persist" && util::env_value("TPUSH_PERSIST")) continue;
    if (is_flag(e.key) && !is_bool_word(e.value))
      throw UsageError(where + ": " + e.key + " = " + inventory::escape_for_message(e.value) +
                       ": a flag is yes or no (fix the value, or remove the line)");
    Options parsed;
    try {
      if (e.key == "relay") {  // not an option of tpush itself: cp's
        const std::string v = util::ascii_lowercase(e.value);
        parsed.relay = v == "yes" || v == "true" || v == "on" || v == "1";
      } else {
        parse_one_option(parsed, e.key, e.key == "identity" ? expand_home(e.value) : e.value);
      }
    } catch (const UsageError& err) {
      throw UsageError(where + ": " + e.key + " = " + inventory::escape_for_message(e.value) + ": " + err.what() +
                       " (fix the value, or remove the line)");
    }
    key.take(o, parsed);
    auto& from = o.from_config[e.key];
    from += (from.empty() ? "" : ", ") + where;
  }
  for (const ConfigEntry& g : config.groups) o.config_groups.push_back({g.key, g.value, config.where(g.line)});
}

fs::path config_default_file() { return util::xdg_dir("XDG_CONFIG_HOME", ".config") / "config"; }

fs::path groups_file() { return util::xdg_dir("XDG_CONFIG_HOME", ".config") / "groups"; }

std::optional<inventory::HostGroups> load_groups(const Options& o) {
  std::optional<inventory::HostGroups> groups;
  const fs::path file = groups_file();
  std::error_code ec;
  if (fs::exists(file, ec)) groups = inventory::HostGroups::read(file);
  if (!o.config_groups.empty()) {
    if (!groups) groups.emplace();
    groups->add_origin("config file " + inventory::quote_for_message(o.config_file.string()));
    for (const ConfigGroup& g : o.config_groups) groups->add(g.name, g.hosts, g.where);
  }
  return groups;
}

std::vector<ConfigValue> describe_config(const Options& o) {
  std::vector<ConfigValue> out;
  for (const Key& k : kKeys) {
    ConfigValue v{std::string(k.name), k.show(o), "", k.rank == Rank::reach};
    const std::string key(k.name);
    if (o.given.count(key)) v.from = "command line";
    else if (auto it = o.from_config.find(key); it != o.from_config.end()) v.from = "config " + it->second;
    else if (key == "zone" && util::env_value("TPUSH_ZONE")) v.value = *util::env_value("TPUSH_ZONE"), v.from = "TPUSH_ZONE";
    else if (!k.otherwise.empty()) v.value.clear(), v.from = std::string(k.otherwise);
    else v.from = "default";
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<string_view> config_keys() {
  std::vector<string_view> out;
  for (const Key& k : kKeys) out.push_back(k.name);
  return out;
}

}  // namespace tpush::commands
