// The remote shell scripts behind kill, kill --tpu, ps, logs and --detach: the
// scripts are src/commands/process_*.sh, put together and completed here.
#include <regex.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tpush/commands/process/process.h"
#include "tpush/commands/process/process_detach_sh.h"
#include "tpush/commands/process/process_follow_sh.h"
#include "tpush/commands/process/process_kill_sh.h"
#include "tpush/commands/process/process_library_sh.h"
#include "tpush/commands/process/process_ps_sh.h"
#include "tpush/commands/process/process_stop_sh.h"
#include "tpush/commands/process/process_tpu_kill_sh.h"
#include "tpush/util/shell_quote.h"

namespace tpush::commands {
namespace {

using util::shell_quote;

// A helper's first lines (its settings), then its scripts in order.
std::string with_scripts(std::string settings, std::initializer_list<std::string_view> scripts) {
  for (std::string_view script : scripts) settings += script;
  return settings;
}

// `sh -c SCRIPT __tpush_helper__ ARGS...` (under sudo with --sudo, as any command).
std::string helper(const std::string& script, const std::vector<std::string>& args) {
  std::string line = "sh -c ";
  line += shell_quote(script) + " " + helper_marker;
  for (const auto& a : args) line += " " + shell_quote(a);
  return line;
}

// The variables process_stop.sh reads: sig, ticks (0.1 s steps), esc (term|kill|none).
std::string stop_settings(const KillSpec& spec) {
  static const std::vector<std::string> ending = {"TERM", "INT", "HUP", "QUIT", "ABRT", "ALRM", "PIPE"};
  const char* esc = spec.signal == "KILL" ? "kill"
                    : std::find(ending.begin(), ending.end(), spec.signal) != ending.end() ? "term"
                                                                                            : "none";
  const long ticks = std::lround(std::ceil(std::max(0.0, spec.grace) * 10));
  return "sig=" + shell_quote(spec.signal) + " ticks=" + std::to_string(ticks) + " esc=" + esc + "\n";
}

// A path for the remote shell: "~/x" stays relative to $HOME, anything else is literal.
std::string remote_path(const std::string& path) {
  if (path == "~") return "\"$HOME\"";
  if (path.rfind("~/", 0) == 0) return "\"$HOME\"/" + shell_quote(path.substr(2));
  return shell_quote(path);
}

}  // namespace

std::optional<std::string> signal_name(const std::string& sig) {
  static const std::vector<std::pair<std::string, int>> known = {
      {"HUP", 1},   {"INT", 2},   {"QUIT", 3},  {"ABRT", 6},  {"KILL", 9},  {"USR1", 10},
      {"USR2", 12}, {"PIPE", 13}, {"ALRM", 14}, {"TERM", 15}, {"CONT", 18}, {"STOP", 19},
      {"TSTP", 20}, {"WINCH", 28}};
  std::string s;
  for (char c : sig) s += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (s.rfind("SIG", 0) == 0) s.erase(0, 3);
  for (const auto& [name, number] : known)
    if (s == name || s == std::to_string(number)) return name;
  return std::nullopt;
}

std::string local_client(const Options& o) {
  const pid_t pid = o.run_host && o.run_host->client ? o.run_host->client : getpid();
  std::string boot;
  std::ifstream("/proc/sys/kernel/random/boot_id") >> boot;
  std::string stat;
  std::getline(std::ifstream("/proc/" + std::to_string(pid) + "/stat"), stat);
  // Field 22 (start time) counted after the ")" that ends field 2 (comm).
  const auto close = stat.rfind(')');
  if (boot.empty() || close == std::string::npos) return {};
  std::istringstream rest(stat.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 22 && rest >> field; ++i) {
  }
  if (!rest) return {};
  return boot + " " + std::to_string(pid) + " " + field;
}

std::string pattern_error(const std::string& pattern) {
  regex_t re;
  const int rc = regcomp(&re, pattern.c_str(), REG_EXTENDED | REG_NOSUB);
  if (rc == 0) {
    regfree(&re);
    return {};
  }
  char buf[256];
  regerror(rc, &re, buf, sizeof buf);
  return buf;
}

std::string kill_script(const std::string& pattern, const KillSpec& spec) {
  const std::string script = with_scripts(std::string("M=") + helper_marker + "\npat=$1 all_users=$2 client=$3\n" +
                                               stop_settings(spec),
                                           {process_library_sh, process_stop_sh, process_kill_sh});
  return helper(script, {pattern, spec.all_users ? "1" : "", spec.client});
}

std::string tpu_kill_script(const TpuKillSpec& spec) {
  std::string script = std::string("M=") + helper_marker + "\nall_users=1 client=$1\n" + stop_settings(spec.kill);
  script += spec.devices ? "devices=" + shell_quote(*spec.devices) + "\n"
                         : "devices=${TPUSH_TPU_DEVICES:-'/dev/accel* /dev/vfio/*'}\n";
  script += spec.lockfiles ? "lockfiles=" + shell_quote(*spec.lockfiles) + "\n"
                           : "lockfiles=${TPUSH_TPU_LOCKFILES:-'/tmp/libtpu_lockfile /tmp/tpu_logs'}\n";
  script = with_scripts(std::move(script), {process_library_sh, process_stop_sh, process_tpu_kill_sh});
  return helper(script, {spec.kill.client});
}

std::string ps_script(const std::optional<std::string>& pattern, bool all_users) {
  const std::string script = with_scripts(std::string("M=") + helper_marker + "\npat=$1 has_pat=$2 all_users=$3\n",
                                           {process_library_sh, process_ps_sh});
  return helper(script, {pattern.value_or(""), pattern ? "1" : "", all_users ? "1" : ""});
}

std::string logs_command(const std::string& file, const std::string& lines, bool follow) {
  if (!follow) return "exec tail -n " + shell_quote(lines) + " -- " + remote_path(file);
  // The file is an argument the remote shell expands ("$HOME"/...), so it is added here.
  return helper(with_scripts("f=$1 n=$2\n", {process_follow_sh}), {}) + " " + remote_path(file) + " " +
         shell_quote(lines);
}

std::string detach_command(const std::string& command, const std::string& log_file) {
  return util::fill_in(process_detach_sh, {{"@LOG@", remote_path(log_file)}, {"@COMMAND@", shell_quote(command)}});
}

}  // namespace tpush::commands
