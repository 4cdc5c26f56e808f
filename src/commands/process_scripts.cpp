// The remote shell scripts behind kill, kill --tpu, ps, logs and --detach.
#include <regex.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tpush/commands/process.h"
#include "tpush/util/shell_quote.h"

namespace tpush::commands {
namespace {

using util::shell_quote;

// Functions every helper shares. Positional use: all_users (set = any owner).
//   stat_of PID        -> st_state st_ppid st_start (fails when PID is gone)
//   alive PID START    -> the process that had START still runs (not a zombie)
//   cmd_of PID         -> c_ (command line, NULs and newlines as spaces)
//   ancestors          -> anc: " $$ parent grandparent ... "
//   client_ancestors   -> + the tpush client that sent us and its ancestors, when it
//                         runs on this machine ($client, see KillSpec::client)
//   match ERE          -> candidate PIDs on stdout (pgrep -f, else a /proc scan)
//   consider PID       -> appends "PID START COMMAND" to targets unless it is us, an
//                         ancestor, a helper, a helper's child, a tpush client (its
//                         argv holds the pattern too: -w localhost), a kernel thread,
//                         a zombie, or (without all_users) someone else's
constexpr const char* kLibrary = R"SH(
stat_of() {
  st_s=
  [ -r "/proc/$1/stat" ] && read -r st_s 2>/dev/null < "/proc/$1/stat" || return 1
  st_s=${st_s##*) }
  set -- $st_s
  st_state=$1 st_ppid=$2 st_start=${20}
}
alive() {
  stat_of "$1" || return 1
  case $st_state in Z|X|x) return 1;; esac
  [ "$st_start" = "$2" ]
}
cmd_of() {
  c_=$(tr '\000\n' '  ' 2>/dev/null < "/proc/$1/cmdline") || c_=
  c_=${c_% }
}
ancestors() {
  anc=" " a_=$$
  while [ "$a_" -gt 0 ] 2>/dev/null && stat_of "$a_"; do anc="$anc$a_ "; a_=$st_ppid; done
}
match() {
  if [ -z "${TPUSH_PROC_SCAN-}" ] && command -v pgrep >/dev/null 2>&1; then
    pgrep -f -- "$1"
    [ $? -le 1 ]
  else
    for d_ in /proc/[0-9]*; do
      cmd_of "${d_#/proc/}"
      [ -n "$c_" ] && printf '%s %s\n' "${d_#/proc/}" "$c_"
    done | TPUSH_PAT=$1 awk '{ p = $1; sub(/^[0-9]+ /, ""); if ($0 ~ ENVIRON["TPUSH_PAT"]) print p }'
  fi
}
# The tpush client that sent us ($client: "BOOT_ID PID START"), when it runs on this
# very machine (same boot id, same pid and start time), and its ancestors (timeout,
# a script, sudo) join anc: their command lines hold the pattern too.
client_ancestors() {
  set -- $client
  [ $# -eq 3 ] || return 0
  b_=
  read -r b_ 2>/dev/null < /proc/sys/kernel/random/boot_id || return 0
  [ "$b_" = "$1" ] && stat_of "$2" && [ "$st_start" = "$3" ] || return 0
  a_=$2
  while [ "$a_" -gt 0 ] 2>/dev/null && stat_of "$a_"; do anc="$anc$a_ "; a_=$st_ppid; done
}
targets=
consider() {
  case $anc in *" $1 "*) return;; esac
  stat_of "$1" || return
  case $st_state in Z|X|x) return;; esac
  [ -n "$all_users" ] || [ -O "/proc/$1" ] || return
  comm_=
  read -r comm_ 2>/dev/null < "/proc/$1/comm"
  [ "$comm_" != tpush ] || return
  t_start=$st_start t_ppid=$st_ppid
  cmd_of "$1"
  t_cmd=$c_
  [ -n "$t_cmd" ] || return
  case $t_cmd in *"$M"*) return;; esac
  cmd_of "$t_ppid"
  case $c_ in *"$M"*) return;; esac
  # A helper's child (another worker's pgrep, on a machine that is several
  # workers) outlives its parent only for a moment: with the parent gone, keep
  # the target only if it still runs.
  [ -n "$c_" ] || alive "$1" "$t_start" || return
  targets="$targets$1 $t_start $t_cmd
"
}
)SH";

// Signalling a target list; sets status=1 when something could not be stopped.
//   signal_all SIG VERB  -> sends SIG to every live target, prints "VERB PID COMMAND";
//                           rest = the ones signalled
//   wait_gone TICKS      -> polls every 0.1 s until rest is empty (0) or TICKS pass (1)
//   stop_targets         -> signal, grace, KILL, report survivors (uses sig ticks esc)
constexpr const char* kStop = R"SH(
status=0 sent=
signal_all() {
  rest=
  while read -r p_ s_ c_; do
    [ -n "$p_" ] || continue
    alive "$p_" "$s_" || continue
    if kill -s "$1" "$p_" 2>/dev/null; then
      printf '%s %s %.200s\n' "$2" "$p_" "$c_"
      sent=1
      rest="$rest$p_ $s_ $c_
"
    elif alive "$p_" "$s_"; then
      printf 'failed %s %.200s (not permitted; try --sudo)\n' "$p_" "$c_"
      status=1
    fi
  done <<EOF_
$targets
EOF_
}
wait_gone() {
  i_=0
  while :; do
    left_=
    while read -r p_ s_ c_; do
      [ -n "$p_" ] && alive "$p_" "$s_" && left_="$left_$p_ $s_ $c_
"
    done <<EOF_
$rest
EOF_
    rest=$left_
    [ -z "$rest" ] && return 0
    [ "$i_" -ge "$1" ] && return 1
    sleep 0.1
    i_=$((i_ + 1))
  done
}
stop_targets() {
  case $esc in
    none) signal_all "$sig" "sent $sig"; return;;
    kill) signal_all KILL killed;;
    *) signal_all "$sig" killed
       wait_gone "$ticks" && return
       targets=$rest
       signal_all KILL KILLed;;
  esac
  t_=$ticks
  [ "$t_" -ge 20 ] || t_=20
  wait_gone "$t_" && return
  while read -r p_ s_ c_; do
    [ -n "$p_" ] && printf 'survived %s %.200s\n' "$p_" "$c_"
  done <<EOF_
$rest
EOF_
  status=1
}
)SH";

constexpr const char* kKillMain = R"SH(
ancestors
client_ancestors
pids=$(match "$pat") || { echo "bad pattern: $pat" >&2; exit 2; }
for p in $pids; do consider "$p"; done
if [ -z "$targets" ]; then echo "nothing matched"; exit 0; fi
stop_targets
[ -n "$sent" ] || [ "$status" != 0 ] || echo "nothing left to stop (what matched ended by itself)"
exit $status
)SH";

// Holders of the devices in "$@": lsof, else fuser, else every /proc/*/fd link.
constexpr const char* kTpuMain = R"SH(
holders() {
  [ $# -gt 0 ] || return 0
  if [ -z "${TPUSH_PROC_SCAN-}" ] && command -v lsof >/dev/null 2>&1; then
    lsof -w -t "$@" 2>/dev/null
  elif [ -z "${TPUSH_PROC_SCAN-}" ] && command -v fuser >/dev/null 2>&1; then
    fuser "$@" 2>/dev/null | tr -s ' \t' '\n\n' | tr -cd '0-9\n'
  else
    devs_=$(printf '%s\n' "$@")
    ls -l /proc/[0-9]*/fd 2>/dev/null | TPUSH_DEVS=$devs_ awk '
      BEGIN { n = split(ENVIRON["TPUSH_DEVS"], d, "\n"); for (k = 1; k <= n; k++) dev[d[k]] = 1 }
      /^\/proc\/[0-9]+\/fd:$/ { split($0, a, "/"); pid = a[3]; next }
      { i = index($0, " -> "); if (i && (substr($0, i + 4) in dev)) print pid }'
  fi | sort -un
}
held_targets() {
  targets=
  for p in $(holders "$@"); do consider "$p"; done
}
ancestors
client_ancestors
set --
for f in $devices; do [ -e "$f" ] && set -- "$@" "$f"; done
if [ $# -eq 0 ]; then
  echo "no TPU devices here ($devices)"
else
  held_targets "$@"
  if [ -z "$targets" ]; then
    echo "no process holds the TPU ($# devices)"
  else
    stop_targets
    i=0
    while held_targets "$@"; [ -n "$targets" ] && [ "$i" -lt "$ticks" ]; do
      sleep 0.5
      i=$((i + 5))
    done
    if [ -n "$targets" ]; then
      while read -r p_ s_ c_; do
        [ -n "$p_" ] && printf 'still held %s %.200s\n' "$p_" "$c_"
      done <<EOF_
$targets
EOF_
      echo "TPU still in use: lock files left in place"
      exit 1
    fi
  fi
fi
removed=0
for l in $lockfiles; do
  [ -e "$l" ] || [ -L "$l" ] || continue
  if err_=$(rm -rf -- "$l" 2>&1) && ! [ -e "$l" ] && ! [ -L "$l" ]; then
    echo "removed $l"
    removed=1
  else
    echo "could not remove $l: ${err_##*: } (try --sudo)"
    status=1
  fi
done
[ "$removed" = 1 ] || [ "$status" != 0 ] || echo "no TPU lock files ($lockfiles)"
exit $status
)SH";

constexpr const char* kPsMain = R"SH(
ancestors
if [ -n "$has_pat" ]; then
  pids=$(match "$pat") || { echo "bad pattern: $pat" >&2; exit 2; }
else
  pids=
  for d in /proc/[0-9]*; do pids="$pids ${d#/proc/}"; done
fi
for p in $pids; do consider "$p"; done
hz=$(getconf CLK_TCK 2>/dev/null) || hz=100
[ -n "$hz" ] || hz=100
read -r up _ < /proc/uptime
up=${up%%.*}
out=$(while read -r p_ s_ c_; do
  [ -n "$p_" ] || continue
  if [ -z "$has_pat" ]; then
    case $c_ in "sshd: "*|sshd-session*|"(sd-pam)"*|*"systemd --user"*) continue;; esac
  fi
  e=$((up - s_ / hz))
  [ "$e" -ge 0 ] || e=0
  if [ "$e" -ge 86400 ]; then
    el=$(printf '%d-%02d:%02d:%02d' $((e / 86400)) $((e % 86400 / 3600)) $((e % 3600 / 60)) $((e % 60)))
  elif [ "$e" -ge 3600 ]; then
    el=$(printf '%02d:%02d:%02d' $((e / 3600)) $((e % 3600 / 60)) $((e % 60)))
  else
    el=$(printf '%02d:%02d' $((e / 60)) $((e % 60)))
  fi
  printf '%7s %11s %s\n' "$p_" "$el" "$c_"
done <<EOF_
$targets
EOF_
)
if [ -z "$out" ]; then
  if [ -n "$has_pat" ]; then echo "nothing matched"; else echo "no processes"; fi
  exit 0
fi
printf '%7s %11s %s\n' PID ELAPSED COMMAND
printf '%s\n' "$out" | sort -n
)SH";

// Follows FILE until the sshd session process that runs us is gone: tpush closing
// the connection (Ctrl-C, timeout, exit) ends the remote tail within a second.
constexpr const char* kFollow = R"SH(
stat_of() {
  st_s=
  [ -r "/proc/$1/stat" ] && read -r st_s 2>/dev/null < "/proc/$1/stat" || return 1
  st_s=${st_s##*) }
  set -- $st_s
  st_ppid=$2
}
w=
a_=$$
while [ "$a_" -gt 1 ] 2>/dev/null && stat_of "$a_"; do
  comm=
  read -r comm 2>/dev/null < "/proc/$a_/comm"
  case $comm in sshd*) w=$a_; break;; esac
  a_=$st_ppid
done
if [ -z "$w" ]; then
  exec tail -n "$n" -F -- "$f"
fi
if tail --pid="$w" -n 0 /dev/null >/dev/null 2>&1; then
  exec tail -n "$n" -F --pid="$w" -- "$f"
fi
tail -n "$n" -F -- "$f" &
t=$!
trap 'kill $t 2>/dev/null' EXIT
while [ -d "/proc/$w" ] && kill -0 "$t" 2>/dev/null; do sleep 1; done
)SH";

// `sh -c SCRIPT __tpush_helper__ ARGS...`, optionally under sudo -n.
std::string helper(const std::string& script, const std::vector<std::string>& args, bool sudo) {
  std::string line = sudo ? "sudo -n sh -c " : "sh -c ";
  line += shell_quote(script) + " " + helper_marker;
  for (const auto& a : args) line += " " + shell_quote(a);
  return line;
}

// The variables kStop reads: sig, ticks (0.1 s steps), esc (term|kill|none).
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
  const std::string script = std::string("M=") + helper_marker + "\npat=$1 all_users=$2 client=$3\n" +
                             stop_settings(spec) + kLibrary + kStop + kKillMain;
  return helper(script, {pattern, spec.sudo ? "1" : "", spec.client}, spec.sudo);
}

std::string tpu_kill_script(const TpuKillSpec& spec) {
  std::string script = std::string("M=") + helper_marker + "\nall_users=1 client=$1\n" + stop_settings(spec.kill);
  script += spec.devices ? "devices=" + shell_quote(*spec.devices) + "\n"
                         : "devices=${TPUSH_TPU_DEVICES:-'/dev/accel* /dev/vfio/*'}\n";
  script += spec.lockfiles ? "lockfiles=" + shell_quote(*spec.lockfiles) + "\n"
                           : "lockfiles=${TPUSH_TPU_LOCKFILES:-'/tmp/libtpu_lockfile /tmp/tpu_logs'}\n";
  script += std::string(kLibrary) + kStop + kTpuMain;
  return helper(script, {spec.kill.client}, spec.kill.sudo);
}

std::string ps_script(const std::optional<std::string>& pattern, bool all_users) {
  const std::string script =
      std::string("M=") + helper_marker + "\npat=$1 has_pat=$2 all_users=$3\n" + kLibrary + kPsMain;
  return helper(script, {pattern.value_or(""), pattern ? "1" : "", all_users ? "1" : ""}, false);
}

std::string logs_command(const std::string& file, const std::string& lines, bool follow) {
  if (!follow) return "exec tail -n " + shell_quote(lines) + " -- " + remote_path(file);
  // The file is an argument the remote shell expands ("$HOME"/...), so it is added here.
  return helper("f=$1 n=$2\n" + std::string(kFollow), {}, false) + " " + remote_path(file) + " " +
         shell_quote(lines);
}

std::string detach_command(const std::string& command, const std::string& log_file) {
  return "tpush_log=" + remote_path(log_file) +
         "\n: >> \"$tpush_log\" || exit 1\n"
         "if command -v setsid >/dev/null 2>&1; then tpush_setsid=setsid; else tpush_setsid=; fi\n"
         "$tpush_setsid nohup \"${SHELL:-/bin/sh}\" -c " +
         shell_quote(command) +
         " < /dev/null >> \"$tpush_log\" 2>&1 &\n"
         "echo \"started pid $!\"\n";
}

}  // namespace tpush::commands
