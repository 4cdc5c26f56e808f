// `tpush config`: which config file and groups are read, and every key's value
// with where it came from.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>

#include "tpush/commands/cli/config_file.h"
#include "tpush/commands/cli/subcommands.h"
#include "tpush/util/string.h"

namespace tpush::commands {
namespace {

std::string file_line(const Options& o) {
  if (!o.config_file.empty()) return o.config_file.string() + " (from " + o.config_found_by + ")";
  if (o.config_found_by.empty()) return "none (no " + config_default_file().string() + ")";
  return "none (" + o.config_found_by + " says none)";
}

}  // namespace

int config_main(Options& o, int /*signal_fd*/) {
  SubcommandSpec spec;
  spec.description =
      "show which config file and groups tpush reads, and each setting's value and where it came from: the "
      "command line, the config file (FILE:LINE), the environment, or the default. Settings marked 'per "
      "worker' rank below ssh_config; tpush workers -v shows what each worker gets.";
  spec.takes_args = false;
  if (!parse_subcommand(o, spec)) return 0;
  const std::optional<inventory::HostGroups> groups = load_groups(o);
  const std::vector<ConfigValue> values = describe_config(o);

  if (o.json) {
    nlohmann::json j;
    j["config_file"] = o.config_file.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.config_file.string());
    j["found_by"] = o.config_found_by.empty() ? nlohmann::json(nullptr) : nlohmann::json(o.config_found_by);
    j["groups_from"] = groups ? nlohmann::json(groups->origin()) : nlohmann::json(nullptr);
    j["groups"] = groups ? groups->names() : std::vector<std::string>{};
    j["settings"] = nlohmann::json::array();
    for (const auto& v : values)
      j["settings"].push_back({{"key", v.key}, {"value", v.value.empty() ? nlohmann::json(nullptr) : nlohmann::json(v.value)},
                               {"from", v.from}, {"per_worker", v.per_worker}});
    std::cout << j.dump() << "\n";
    return 0;
  }
  std::cout << "config file: " << file_line(o) << "\n";
  std::cout << "groups: "
            << (groups ? groups->origin() + ": " + (groups->names().empty() ? "(none)" : util::join(groups->names(), ", "))
                       : "none (no " + groups_file().string() + ", no [groups] in a config file)")
            << "\n\n";
  std::size_t key_w = 3, value_w = 5;
  for (const auto& v : values) {
    key_w = std::max(key_w, v.key.size());
    value_w = std::max(value_w, v.value.empty() ? 1 : v.value.size());
  }
  auto row = [&](const std::string& a, const std::string& b, const std::string& c) {
    std::cout << a << std::string(key_w + 2 - a.size(), ' ') << b << std::string(value_w + 2 - b.size(), ' ') << c
              << "\n";
  };
  row("KEY", "VALUE", "FROM");
  for (const auto& v : values) {
    std::string from = v.from;
    if (v.per_worker && v.from.rfind("config ", 0) == 0) from += " (per worker: ssh_config ranks above)";
    row(v.key, v.value.empty() ? "-" : v.value, from);
  }
  return 0;
}

}  // namespace tpush::commands
