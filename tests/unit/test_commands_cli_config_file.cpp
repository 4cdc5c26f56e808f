// tpush's config file: its syntax and errors, what it sets and what wins over
// it, where it is found, its groups, and what `tpush config` reports.
#include <doctest/doctest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "test_options_support.h"
#include "test_support.h"
#include "tpush/commands/cli/config_file.h"
#include "tpush/commands/cli/options.h"
#include "tpush/util/error.h"

namespace {

using tpush::UsageError;
using tpush::commands::ConfigFile;
using tpush::commands::Options;
using tpush::test::error_of;
using tpush::test::parse_words;
using tpush::test::TempDir;

// Sets (or unsets) an environment variable for one scope.
class EnvVar {
 public:
  EnvVar(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value->c_str(), 1);
    else ::unsetenv(name);
  }
  ~EnvVar() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }
  EnvVar(const EnvVar&) = delete;
  EnvVar& operator=(const EnvVar&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::string config_error(const std::string& text) {
  return error_of<UsageError>([&] { tpush::commands::parse_config(text, "/etc/x/config"); });
}

}  // namespace

TEST_CASE("config: settings, comments and [groups]") {
  const ConfigFile c = tpush::commands::parse_config(
      "# defaults\n"
      "user = alice\n"
      "  fanout=64   # at most 64 at once\n"
      "identity = ~/.ssh/a\n"
      "identity = ~/.ssh/b#not-a-comment\n"
      "\n"
      "[groups]\n"
      "gpu = node[01-16]\n"
      "pods = tpu:pod-a, tpu:pod-b\n",
      "/home/a/.config/tpush/config");
  REQUIRE(c.settings.size() == 4);
  CHECK(c.settings[0].key == "user");
  CHECK(c.settings[0].value == "alice");
  CHECK(c.settings[1].key == "fanout");
  CHECK(c.settings[1].value == "64");
  CHECK(c.settings[1].line == 3);
  CHECK(c.settings[3].value == "~/.ssh/b#not-a-comment");
  REQUIRE(c.groups.size() == 2);
  CHECK(c.groups[1].key == "pods");
  CHECK(c.groups[1].value == "tpu:pod-a, tpu:pod-b");
  CHECK(c.where(8) == "/home/a/.config/tpush/config:8");
}

TEST_CASE("config: every mistake is one line naming FILE:LINE and the fix") {
  CHECK(config_error("fanuot = 3\n") ==
        "/etc/x/config:1: unknown key 'fanuot' (did you mean 'fanout'?); the keys are user, port, identity, jump, "
        "connect-timeout, alive-interval, host-key-check, persist, fanout, timeout, zone, project, gcloud-timeout, "
        "internal-ip, tunnel-through-iap, fetch-host-keys, label, color, quiet, summary-always, relay");
  CHECK(config_error("\ntty = yes\n") ==
        "/etc/x/config:2: 'tty' cannot be set in the config file: it is about one run; give it on the command line");
  CHECK(config_error("tpu = mytpu\n") ==
        "/etc/x/config:1: 'tpu' cannot be set in the config file: it chooses the workers of one run; define a "
        "group in [groups] and use -w @GROUP");
  CHECK(config_error("[hosts]\n") == "/etc/x/config:1: '[hosts]' is not a section tpush knows (the only one is [groups])");
  CHECK(config_error("fanout 64\n") == "/etc/x/config:1: 'fanout 64' is not a setting (write KEY = VALUE, like 'fanout = 64')");
  CHECK(config_error("user =\n") == "/etc/x/config:1: user needs a value (write user = VALUE, or remove the line)");
  CHECK(config_error("= 3\n") == "/etc/x/config:1: a setting needs a name before '=' (write KEY = VALUE)");
  CHECK(config_error("user\x1b[2J = x\n").find("'user\\x1b[2J'") != std::string::npos);
}

TEST_CASE("config: values get the options' own checks, named by FILE:LINE") {
  TempDir dir;
  auto load = [&](const std::string& text) {
    Options o;
    tpush::commands::apply_config(o, tpush::commands::parse_config(text, dir / "config"));
    return o;
  };
  const std::string file = (dir / "config").string();
  std::string msg = error_of<UsageError>([&] { load("user = a\nfanout = many\n"); });
  CHECK(msg.rfind(file + ":2: fanout = many: ", 0) == 0);
  CHECK(msg.find("(fix the value, or remove the line)") != std::string::npos);
  msg = error_of<UsageError>([&] { load("label = ip\n"); });
  CHECK(msg.rfind(file + ":1: label = ip: ", 0) == 0);
  CHECK(msg.find("host") != std::string::npos);
  CHECK(error_of<UsageError>([&] { load("zone = a\nzone = b\n"); }) ==
        file + ":2: zone is set twice (keep one line; identity is the one key that repeats)");
  CHECK(error_of<UsageError>([&] { load("quiet = perhaps\n"); }) ==
        file + ":1: quiet = perhaps: a flag is yes or no (fix the value, or remove the line)");
  CHECK(load("quiet = Yes\n").quiet);
  CHECK_FALSE(load("quiet = off\n").quiet);
  CHECK(error_of<UsageError>([&] { load("fanout = 0\n"); }) ==
        file + ":1: fanout = 0: --fanout: 0 is below 1 (fix the value, or remove the line)");
}

TEST_CASE("config: the file sets options, the command line wins") {
  TempDir dir;
  const auto file = dir.write("config",
                              "fanout = 64\nlabel = index\nquiet = yes\nuser = alice\nport = 2222\n"
                              "identity = ~/.ssh/gce\nidentity = /k2\nconnect-timeout = 20\nzone = zc\n");
  EnvVar config("TPUSH_CONFIG", file.string());
  EnvVar zone("TPUSH_ZONE", std::nullopt);
  EnvVar home("HOME", "/home/alice");

  Options o = parse_words({"-w", "h", "true"});
  CHECK(o.fanout == 64);
  CHECK(o.label == "index");
  CHECK(o.quiet);
  CHECK(o.zone == "zc");
  // Reach settings are defaults below the host list and ssh_config (worker_reach).
  CHECK(o.user.empty());
  CHECK(o.reach_defaults.user == "alice");
  CHECK(o.reach_defaults.port == 2222);
  CHECK(o.reach_defaults.identities == std::vector<std::string>{"/home/alice/.ssh/gce", "/k2"});
  CHECK(o.reach_defaults.connect_timeout == 20);
  CHECK(o.config_file == file);
  CHECK(o.config_found_by == "TPUSH_CONFIG");
  CHECK(o.from_config.at("fanout") == file.string() + ":1");
  CHECK(o.from_config.at("identity") == file.string() + ":6, " + file.string() + ":7");

  o = parse_words({"-f", "8", "--label=host", "-l", "bob", "-w", "h", "true"});
  CHECK(o.fanout == 8);
  CHECK(o.label == "host");
  CHECK(o.user == "bob");
  CHECK(o.reach_defaults.user.empty());
  CHECK(o.given.count("fanout") == 1);
  CHECK(o.from_config.count("fanout") == 0);

  // After a subcommand's name, a flag still wins over the file.
  o = parse_words({"workers", "-f", "3"});
  tpush::commands::SubcommandSpec spec;
  spec.takes_args = false;
  REQUIRE(tpush::commands::parse_subcommand(o, spec).has_value());
  CHECK(o.fanout == 3);
  CHECK(o.from_config.count("fanout") == 0);
  auto values = tpush::commands::describe_config(o);
  auto from = [&](const std::string& key) {
    for (const auto& v : values)
      if (v.key == key) return v.value + " | " + v.from;
    return std::string("(missing)");
  };
  CHECK(from("fanout") == "3 | command line");
  CHECK(from("label") == "index | config " + file.string() + ":2");
  CHECK(from("user") == "alice | config " + file.string() + ":4");
  CHECK(from("timeout") == " | no limit");
  CHECK(from("gcloud-timeout") == "60 | default");

  // The environment's zone wins over the file's.
  EnvVar env_zone("TPUSH_ZONE", "ze");
  o = parse_words({"-w", "h", "true"});
  CHECK(o.zone.empty());
  values = tpush::commands::describe_config(o);
  CHECK(from("zone") == "ze | TPUSH_ZONE");
}

TEST_CASE("config: where it is found") {
  TempDir dir;
  EnvVar xdg("XDG_CONFIG_HOME", dir.path().string());
  EnvVar env("TPUSH_CONFIG", std::nullopt);
  // Nothing at the default location: no file, no error.
  CHECK(tpush::commands::load_config("").file.empty());
  std::filesystem::create_directories(dir / "tpush");
  dir.write("tpush/config", "fanout = 5\n");
  ConfigFile c = tpush::commands::load_config("");
  CHECK(c.file == dir / "tpush" / "config");
  CHECK(c.found_by == "the default location");
  CHECK(tpush::commands::load_config("none").file.empty());
  // An explicit file must exist.
  CHECK(error_of<UsageError>([&] { tpush::commands::load_config((dir / "nope").string()); }) ==
        "cannot read config file '" + (dir / "nope").string() +
            "' (from --config): No such file or directory (create it, or give --config none)");
  EnvVar named("TPUSH_CONFIG", (dir / "missing").string());
  CHECK(error_of<UsageError>([&] { tpush::commands::load_config(""); }).find("(from TPUSH_CONFIG)") !=
        std::string::npos);
  CHECK(error_of<UsageError>([&] { parse_words({"--config", "/nonexistent/c", "-w", "h", "true"}); })
            .rfind("cannot read config file '/nonexistent/c' (from --config)", 0) == 0);
}

TEST_CASE("config: groups from the groups file and from [groups] add up") {
  TempDir dir;
  EnvVar xdg("XDG_CONFIG_HOME", dir.path().string());
  std::filesystem::create_directories(dir / "tpush");
  Options o;
  CHECK_FALSE(tpush::commands::load_groups(o).has_value());

  dir.write("tpush/groups", "gpu: node[1-2]\n");
  tpush::commands::apply_config(o, tpush::commands::parse_config("[groups]\ngpu = node9\npods = tpu:a\n",
                                                                 dir / "tpush" / "config"));
  const auto groups = tpush::commands::load_groups(o);
  REQUIRE(groups.has_value());
  CHECK(groups->find("", "gpu")->expression == "node[1-2],node9");
  CHECK(groups->find("", "pods")->where == (dir / "tpush" / "config").string() + ":3");
  CHECK(groups->origin() == "groups file '" + (dir / "tpush" / "groups").string() + "' and config file '" +
                                (dir / "tpush" / "config").string() + "' (source 'local')");

  Options bad;
  tpush::commands::apply_config(bad, tpush::commands::parse_config("[groups]\nmy group = a\n", dir / "c"));
  CHECK(error_of<UsageError>([&] { tpush::commands::load_groups(bad); }) ==
        (dir / "c").string() + ":2: group name 'my group' cannot hold blanks or any of :,@[]!&^*?#");
}

TEST_CASE("config: --config after a subcommand's name is refused, not ignored") {
  Options o = parse_words({"workers", "--config", "/x"});
  tpush::commands::SubcommandSpec spec;
  spec.takes_args = false;
  CHECK(error_of<UsageError>([&] { tpush::commands::parse_subcommand(o, spec); }) ==
        "--config goes before the subcommand's name (tpush --config FILE workers ...)");
}
