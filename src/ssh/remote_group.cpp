#include "tpush/ssh/remote_group.h"

#include <cctype>
#include <cstdio>
#include <random>
#include <utility>

#include "tpush/util/shell_quote.h"

namespace tpush::ssh {
namespace {

// How far into stderr the tag is looked for: the login shell's own warnings
// come before it, the command's output after it.
constexpr std::size_t kMaxLinesBeforeTag = 16;
constexpr std::size_t kMaxPidDigits = 10;

// Runs in the background with /dev/null for every stream (so sshd never waits
// for it), until the login shell ($1) or the sshd session process ($2) ends,
// whichever is first: a `tail --pid` waiter on each, and a SIGCHLD trap that
// ends both and the wait (both may have ended before the trap knew their
// pids: hence the check before waiting; KILL, since they inherit the ignored
// TERM). When the session went first with the shell still running, the
// connection was lost mid-command: HUP to the group, as a pty's hang-up would
// do. It never outlives the command, so a session kept between runs (--persist)
// gathers none. INT and TERM, which tpush sends to the group, pass it by.
constexpr const char* kWatchdog =
    "trap '' INT TERM; trap 'kill -s KILL $w $s 2>/dev/null' CHLD; "
    "tail --pid=\"$2\" -f /dev/null 2>/dev/null & w=$!; tail --pid=\"$1\" -f /dev/null 2>/dev/null & s=$!; "
    "if kill -0 \"$1\" 2>/dev/null && kill -0 \"$2\" 2>/dev/null; then wait; fi; kill -s KILL $w $s 2>/dev/null; "
    "kill -0 \"$2\" 2>/dev/null || { kill -0 \"$1\" 2>/dev/null && kill -s HUP -- \"-$1\"; }";

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

const std::string& group_tag() {
  static const std::string tag = [] {
    std::random_device rd;
    char nonce[17];
    std::snprintf(nonce, sizeof nonce, "%08x%08x", rd(), rd());
    return "tpush:pgid:" + std::string(nonce) + ":";
  }();
  return tag;
}

// The watchdog is forked with INT and TERM ignored from the first instant (a
// child that had not yet set its own traps died of the first Ctrl-C's INT to the
// group, under load); the shell takes its defaults back before it reports its
// group, so what tpush sends to the group after that reaches the command.
std::string with_group_report(const std::string& command) {
  return "trap '' INT TERM; sh -c " + util::shell_quote(kWatchdog) + " " + helper_marker +
         " \"$$\" \"$PPID\" </dev/null >/dev/null 2>&1 & trap - INT TERM; printf '%s%s\\n' " +
         util::shell_quote(group_tag()) + " \"$$\" >&2\n" + command;
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
