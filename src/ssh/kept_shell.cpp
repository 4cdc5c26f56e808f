#include "tpush/ssh/kept_shell.h"

#include <limits>
#include <utility>

#include "tpush/ssh/remote_group.h"
#include "tpush/util/shell_quote.h"

namespace tpush::ssh {
namespace {

// What a change to would make a new login differ from the kept shell: the
// environment sshd and PAM set up, the rc files sshd runs, and what bash reads
// when sshd starts it (or, below the top shell level, $BASH_ENV).
constexpr const char* kLoginFiles =
    "/etc/environment \"$HOME/.pam_environment\" \"$HOME/.ssh/environment\" \"$HOME/.ssh/rc\" "
    "/etc/ssh/sshrc /etc/bash.bashrc \"$HOME/.bashrc\" ${BASH_ENV:+\"$BASH_ENV\"}";

// How many claim files a kept shell lets pile up before it removes them (with
// one `rm`, a fork and an exec that the commands in between do not pay).
constexpr int kClaimsKept = 64;

// The hello line's word: "ready " and the guardian's directory, where the
// claims are. A longer line is not the shell's.
constexpr std::size_t kMaxHello = 4096;

// The shell's own variables and its function, all named tpush_..., are unset
// before the command runs. Its stderr is /dev/null (bash's notices about its
// jobs go there); each job gets the channel's stderr from fd 3. `wait` returns
// when a job stops, too: the loop waits until it is gone. tpush_state is
// which login files exist and what they hold, read with the `read` builtin
// (no fork; bash reads a regular file in blocks, a few syscalls for a few
// kB): any difference from the start and the command is declined. Contents,
// not times: file times move in clock ticks (a few ms; nanosecond fields
// too), so an edit in the tick the shell started in has the time the file
// had, and one written with its old time (cp -p, rsync -t, tar) never looks
// newer; ctime and size would need stat(1), a fork per command. A variable
// holds no NUL byte, so a file is read as its NUL-separated pieces, each
// length-prefixed: bash drops NULs and runs what follows them, so an edit
// after one counts too. (The directory must be writable: the claims below
// are made there.) Then the
// command's claim: a file made with noclobber (O_EXCL), so that of the kept
// shell and a later login running the same command (with_claim()) only the
// first runs it. The shell removes its own claims CLAIMS_KEPT commands at a
// time, never the one of the command it is running: the client sends a
// command only once it knows how the one before ended.
constexpr const char* kShellLoop = R"SH(exec 3>&2 2>/dev/null
tpush_t=$tpush_d/shell-$$
: > "$tpush_t" || exit 0
tpush_state() {
  tpush_x=
  for tpush_f in LOGIN_FILES; do
    if [ -e "$tpush_f" ]; then
      tpush_x+=1
      { while IFS= read -r -d '' tpush_v; do tpush_x+="${#tpush_v}:$tpush_v,"; done
        tpush_x+="${#tpush_v}:$tpush_v."; } < "$tpush_f"
    else tpush_x+=0; fi
  done
}
tpush_state; tpush_x0=$tpush_x tpush_a= tpush_i=0
set -m
printf '%sready %s\n' "$1" "$tpush_d"
while read -r tpush_n tpush_p tpush_e tpush_k; do
  tpush_c=
  while [ "$tpush_n" -gt 0 ] && IFS= read -r tpush_l; do tpush_c+=$tpush_l$'\n'; tpush_n=$((tpush_n - 1)); done
  tpush_state
  if [ "$tpush_x" != "$tpush_x0" ]; then printf '%sstale\n' "$tpush_e"; printf '%sstale\n' "$tpush_e" >&3; exit 0; fi
  if [ "$tpush_i" -ge CLAIMS_KEPT ]; then (cd "$tpush_d" && IFS=' ' && command rm -f -- $tpush_a) </dev/null >/dev/null; tpush_a= tpush_i=0; fi
  tpush_o=$-; set -C
  { : > "$tpush_d/c$tpush_k"; } && tpush_r=0 || tpush_r=1
  case $tpush_o in *C*) ;; *) set +C;; esac
  if [ "$tpush_r" != 0 ]; then printf '%sclaimed\n' "$tpush_e"; printf '%sclaimed\n' "$tpush_e" >&3; exit 0; fi
  tpush_a+=" c$tpush_k" tpush_i=$((tpush_i + 1))
  ( trap - INT TERM QUIT HUP
    printf '%s%s\n' "$tpush_p" "$BASHPID" >&2
    read -r tpush_s < "/proc/$BASHPID/stat" && printf '%s\n' "$tpush_s" > "$tpush_d/j$$"
    set +m --; exec 3>&-
    eval "unset -f tpush_state; unset tpush_a tpush_c tpush_d tpush_e tpush_f tpush_g tpush_i tpush_j tpush_k tpush_l tpush_n tpush_o tpush_p tpush_r tpush_s tpush_t tpush_v tpush_w tpush_x tpush_x0; $tpush_c" ) </dev/null 2>&3 &
  tpush_j=$!
  while :; do wait "$tpush_j"; tpush_r=$?; kill -0 "$tpush_j" 2>/dev/null || break; done
  if kill -0 -- "-$tpush_j" 2>/dev/null; then tpush_w=$tpush_r+; else tpush_w=$tpush_r; fi
  printf '%s%s\n' "$tpush_e" "$tpush_w"; printf '%s%s\n' "$tpush_e" "$tpush_w" >&3
  [ "$tpush_w" = "$tpush_r" ] || exit 0
done
)SH";

}  // namespace

// Run by the login shell: anything but bash leaves at once, as does a shell
// without a guardian directory of the user's. The hello tag comes as $1.
std::string kept_shell_script(const std::string& hello_tag) {
  std::string loop = kShellLoop;
  loop.replace(loop.find("LOGIN_FILES"), std::string_view("LOGIN_FILES").size(), kLoginFiles);
  loop.replace(loop.find("CLAIMS_KEPT"), std::string_view("CLAIMS_KEPT").size(), std::to_string(kClaimsKept));
  return "[ -n \"$BASH_VERSION\" ] || exit 0\nset -- '" + hello_tag + "'\n" + guardian_start("exit 0;") + "\n" +
         loop;
}

std::string with_claim(const std::string& claim, const std::string& command) {
  return "(set -C; : > " + util::shell_quote(claim) + ") 2>/dev/null || exit 255\n" + command;
}

namespace {

bool valid_status(std::string_view word) {
  if (word.empty() || word.size() > 3) return false;
  for (char c : word)
    if (c < '0' || c > '9') return false;
  return true;
}

}  // namespace

std::string_view KeptShell::Input::peek(std::uint64_t offset) const {
  const std::uint64_t skip = offset - base_;
  if (skip >= data_.size()) return {};
  return std::string_view(data_).substr(static_cast<std::size_t>(skip));
}

void KeptShell::Input::drop_before(std::uint64_t offset) {
  const std::uint64_t n = std::min<std::uint64_t>(offset - base_, data_.size());
  data_.erase(0, static_cast<std::size_t>(n));
  base_ += n;
}

KeptShell::KeptShell(LIBSSH2_SESSION* session)
    : hello_tag_("tpush:shell:" + nonce() + ":"),
      channel_(session, kept_shell_script(hello_tag_), ExecChannel::Settings{false, &input_}),
      hello_(hello_tag_, kMaxHello) {}

bool KeptShell::opening() const { return channel_.phase() == ExecChannel::Phase::open; }

bool KeptShell::ended() const {
  return channel_.ended();
}

bool KeptShell::run(std::string_view command, const std::string& group_tag) {
  if (state_ != State::ready || command.find('\0') != std::string_view::npos) return false;
  const std::string end_tag = "tpush:end:" + nonce() + ":";
  claim_ = nonce();
  std::string text(command);
  text += '\n';
  std::size_t lines = 0;
  for (char c : text) lines += c == '\n';
  out_marker_.emplace(end_tag);
  err_marker_.emplace(end_tag);
  end_.reset();
  answered_ = false;
  // No round trip first to see that the session still lives: the claim makes
  // running the command again elsewhere safe when it never answers.
  sent_before_run_ = input_.end();
  input_.append(std::to_string(lines) + " " + group_tag + " " + end_tag + " " + claim_ + "\n" + text);
  state_ = State::running;
  return true;
}

void KeptShell::advance(const ExecChannel::Sink& sink) {
  if (state_ == State::gone) return;
  const ExecChannel::Sink mine{
      [&](int stream, std::string_view bytes) { take(stream, bytes, sink); },
      [&] { return state_ == State::running || state_ == State::draining ? sink.can_accept() : true; }};
  channel_.advance(mine);
  input_.drop_before(channel_.input_offset());
  if (ended()) channel_ended(sink);
}

void KeptShell::take(int stream, std::string_view bytes, const ExecChannel::Sink& sink) {
  switch (state_) {
    case State::starting:
      // What bash's startup files print comes once, here, and is dropped; the
      // hello line ends it.
      if (stream != 1) return;
      hello_.feed(bytes);
      if (!hello_.word()) return;
      if (const std::string& word = *hello_.word(); word.rfind("ready /", 0) == 0) {
        claims_ = word.substr(std::string_view("ready ").size());
        state_ = State::ready;
        was_ready_ = true;
      } else {
        leave();
      }
      return;
    case State::running: {
      answered_ = true;
      KeptShellMarker& marker = stream == 1 ? *out_marker_ : *err_marker_;
      if (marker.word()) {  // the other stream's marker is still to come
        marker.feed(bytes);  // kept in its rest: output of a process left behind
        return;
      }
      const std::string own = marker.feed(bytes);
      if (!own.empty()) sink.data(stream, own);
      if (out_marker_->word() && err_marker_->word()) markers_done(sink);
      return;
    }
    case State::draining:
      sink.data(stream, bytes);
      return;
    case State::ready:    // a process left by an earlier command, in a session of its own
    case State::leaving:  // after the last marker
    case State::gone:
      return;
  }
}

void KeptShell::markers_done(const ExecChannel::Sink& sink) {
  const std::string word = *out_marker_->word();
  if (word == "stale") {
    end_ = RunEnd::declined();
    return leave();
  }
  if (word == "claimed") {  // only if the client gave up on this session and ran it elsewhere
    end_ = RunEnd::failed("the worker's kept shell found the command already claimed");
    return leave();
  }
  const bool left_behind = !word.empty() && word.back() == '+';
  const std::string status = left_behind ? word.substr(0, word.size() - 1) : word;
  if (!valid_status(status) || *err_marker_->word() != word) {
    end_ = RunEnd::failed("the worker's kept shell wrote an unexpected end line: " + word);
    return leave();
  }
  status_ = std::stoi(status);
  if (!left_behind) {
    end_ = RunEnd::exited(status_);
    state_ = State::ready;
    return;
  }
  // The shell leaves; what the processes left behind write is the command's
  // until they close the channel's output, as with an exec channel.
  state_ = State::draining;
  input_.close();
  for (int stream : {1, 2}) {
    const std::string rest = (stream == 1 ? *out_marker_ : *err_marker_).take_rest();
    if (!rest.empty()) sink.data(stream, rest);
  }
}

void KeptShell::leave() {
  state_ = State::leaving;
  input_.close();
}

// A run in progress ends with the channel: as the channel failed, else as the
// state says (only after "+" is the channel's end the run's).
void KeptShell::channel_ended(const ExecChannel::Sink& sink) {
  const State was = std::exchange(state_, State::gone);
  if (was != State::running && was != State::draining) return;
  if (was == State::running) {
    for (int stream : {1, 2}) {
      const std::string held = (stream == 1 ? *out_marker_ : *err_marker_).flush();
      if (!held.empty()) sink.data(stream, held);
    }
  }
  if (channel_.phase() == ExecChannel::Phase::failed) {
    end_ = RunEnd::failed(channel_.error(), channel_.server_hung_up());
  } else if (was == State::draining) {
    end_ = RunEnd::exited(status_);
  } else {
    end_ = RunEnd::failed(answered_ ? "the worker's kept shell ended before the command did"
                                    : "the worker's kept shell ended");
  }
}

}  // namespace tpush::ssh
