#include "tpush/ssh/remote_group.h"

#include <sys/random.h>

#include <cctype>
#include <cstdint>
#include <cstdio>
#include <random>
#include <utility>

#include "tpush/ssh/remote_group_guardian_sh.h"
#include "tpush/ssh/remote_group_stdin_watch_sh.h"
#include "tpush/ssh/remote_group_watchdog_sh.h"
#include "tpush/util/shell_quote.h"

namespace tpush::ssh {
namespace {

// How far into stderr the tag is looked for: the login shell's own warnings
// come before it, the command's output after it.
constexpr std::size_t kMaxLinesBeforeTag = 16;
constexpr std::size_t kMaxPidDigits = 10;

// The hang-up watches: on stdin, the watchdog (per command) and the guardian
// (per connection). See their files.
constexpr std::string_view kStdinWatch = util::one_line(remote_group_stdin_watch_sh);
constexpr std::string_view kWatchdog = util::one_line(remote_group_watchdog_sh);
constexpr std::string_view kGuardian = util::one_line(remote_group_guardian_sh);

const std::string& stdin_watch() {
  static const std::string watch = util::fill_in(kStdinWatch, {{"@MARKER@", helper_marker}});
  return watch;
}

bool is_digits(std::string_view s) {
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// True while `s` (no newline yet) may still grow into the tag line.
bool could_be_tag(std::string_view s) {
  const std::string& tag = group_tag();
  if (s.size() <= tag.size()) return tag.compare(0, s.size(), s) == 0;
  const std::string_view pid = s.substr(tag.size());
  return s.substr(0, tag.size()) == tag && pid.size() <= kMaxPidDigits && is_digits(pid);
}

}  // namespace

// The connection's guardian if it runs, else a new one in a directory of ours
// (never one another user made, nor a link). Whoever makes the directory
// starts the guardian: the first command and the kept shell start side by
// side, and the other finds the directory made, with no pid in it yet or a
// live one. A pid that is no longer running is a guardian killed outright: a
// new one takes its place.
std::string guardian_start(const std::string& otherwise) {
  return "tpush_d=${XDG_RUNTIME_DIR:-/tmp}/tpush-guard-$PPID; "
         "if mkdir -m 700 \"$tpush_d\"; then tpush_g=; "
         "elif [ -O \"$tpush_d\" ] && [ ! -L \"$tpush_d\" ]; then tpush_g=0; "
         "[ -s \"$tpush_d/pid\" ] && ! { read -r tpush_g < \"$tpush_d/pid\" && kill -0 \"$tpush_g\"; } && tpush_g=; "
         "else tpush_d=; " +
         otherwise +
         " fi 2>/dev/null; "
         "if [ -n \"$tpush_d\" ] && [ -z \"$tpush_g\" ]; then sh -c " +
         util::shell_quote(kGuardian) + " " + helper_marker +
         " \"$PPID\" \"$tpush_d\" </dev/null >/dev/null 2>&1 & echo \"$!\" > \"$tpush_d/pid\"; fi; ";
}

// From getrandom(2): one system call, where a std::random_device costs its
// setup (CPUID, which traps to the hypervisor on a VM) for every nonce.
std::string nonce() {
  std::uint64_t value = 0;
  if (::getrandom(&value, sizeof value, 0) != static_cast<ssize_t>(sizeof value)) {
    std::random_device rd;
    value = (static_cast<std::uint64_t>(rd()) << 32) | rd();
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

const std::string& group_tag() {
  static const std::string tag = "tpush:pgid:" + nonce() + ":";
  return tag;
}

// Every watch is forked with INT and TERM ignored from the first instant (a
// child that had not yet set its own traps died of the first Ctrl-C's INT to the
// group, under load); the shell takes its defaults back before it reports its
// group, so what tpush sends to the group after that reaches the command.
std::string with_group_report(const std::string& command, HangUpWatch watch) {
  const std::string watchdog =
      "sh -c " + util::shell_quote(kWatchdog) + " " + helper_marker + " \"$$\" \"$PPID\" </dev/null >/dev/null 2>&1 &";
  std::string prologue = "trap '' INT TERM; ";
  if (watch == HangUpWatch::stdin) {
    prologue += stdin_watch() + "; ";
  } else if (watch == HangUpWatch::per_command) {
    prologue += watchdog + " ";
  } else {
    // Failing the guardian, the command's own watchdog. Then the shell
    // registers itself, with builtins only. The shell variables are unset
    // again: the command sees none of them.
    prologue += guardian_start(watchdog) +
                "if [ -n \"$tpush_d\" ]; then read -r tpush_s < \"/proc/$$/stat\"; "
                "printf '%s\\n' \"$tpush_s\" > \"$tpush_d/$$\"; fi 2>/dev/null; "
                "unset tpush_d tpush_g tpush_s; ";
  }
  return prologue + "trap - INT TERM; printf '%s%s\\n' " + util::shell_quote(group_tag()) + " \"$$\" >&2\n" +
         command;
}

std::string group_signal_command(long pgid, const std::string& signal) {
  return "kill -s " + signal + " -- -" + std::to_string(pgid) + " 2>/dev/null";
}

std::string GroupReport::filter(std::string_view chunk) {
  std::string out;
  while (!chunk.empty() && !done_) {
    const std::size_t nl = chunk.find('\n');
    if (in_line_) {  // the rest of a line that is not the tag
      out.append(chunk.substr(0, nl == std::string_view::npos ? chunk.size() : nl + 1));
      if (nl == std::string_view::npos) return out;
      chunk.remove_prefix(nl + 1);
      in_line_ = false;
      done_ = ++lines_ >= kMaxLinesBeforeTag;
      continue;
    }
    if (nl == std::string_view::npos) {
      held_.append(chunk);
      chunk = {};
      if (!could_be_tag(held_)) {
        out += held_;
        held_.clear();
        in_line_ = true;
      }
      break;
    }
    held_.append(chunk.substr(0, nl + 1));
    chunk.remove_prefix(nl + 1);
    take_line(held_, out);
    held_.clear();
  }
  out.append(chunk);  // what follows the tag, or comes after the search ended
  return out;
}

void GroupReport::take_line(std::string_view line, std::string& out) {
  const std::string_view body = line.substr(0, line.size() - 1);  // without '\n'
  if (body.size() > group_tag().size() && could_be_tag(body)) {
    // Never 0 or 1: `kill -- -1` would signal every process the user may signal.
    const long pid = std::stol(std::string(body.substr(group_tag().size())));
    if (pid > 1) pgid_ = pid;
    done_ = true;
    return;
  }
  out.append(line);
  done_ = ++lines_ >= kMaxLinesBeforeTag;
}

std::string GroupReport::flush() {
  done_ = true;
  return std::exchange(held_, {});
}

}  // namespace tpush::ssh
