#include "tpush/ssh/kept_shell.h"

#include <limits>
#include <utility>

#include "tpush/ssh/kept_shell_loop_sh.h"
#include "tpush/ssh/remote_group.h"
#include "tpush/util/shell_quote.h"

namespace tpush::ssh {
namespace {

// The hello line's word: "ready " and the guardian's directory, where the
// claims are. A longer line is not the shell's.
constexpr std::size_t kMaxHello = 4096;

}  // namespace

// Run by the login shell: anything but bash leaves at once, as does a shell
// without a guardian directory of the user's. The hello tag comes as $1.
std::string kept_shell_script(const std::string& hello_tag) {
  return "[ -n \"$BASH_VERSION\" ] || exit 0\nset -- '" + hello_tag + "'\n" + guardian_start("exit 0;") + "\n" +
         std::string(kept_shell_loop_sh);
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

KeptShell::KeptShell(Session& session)
    : hello_tag_("tpush:shell:" + nonce() + ":"),
      channel_(session.open_channel(kept_shell_script(hello_tag_), Channel::Settings{.input = &input_})),
      hello_(hello_tag_, kMaxHello) {}

bool KeptShell::opening() const { return channel_->phase() == Channel::Phase::open; }

bool KeptShell::ended() const {
  return channel_->ended();
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

void KeptShell::advance(const Channel::Sink& sink) {
  if (state_ == State::gone) return;
  const Channel::Sink mine{
      [&](int stream, std::string_view bytes) { take(stream, bytes, sink); },
      [&] { return state_ == State::running || state_ == State::draining ? sink.can_accept() : true; }};
  channel_->advance(mine);
  input_.drop_before(channel_->input_offset());
  if (ended()) channel_ended(sink);
}

void KeptShell::take(int stream, std::string_view bytes, const Channel::Sink& sink) {
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

void KeptShell::markers_done(const Channel::Sink& sink) {
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
void KeptShell::channel_ended(const Channel::Sink& sink) {
  const State was = std::exchange(state_, State::gone);
  if (was != State::running && was != State::draining) return;
  if (was == State::running) {
    for (int stream : {1, 2}) {
      const std::string held = (stream == 1 ? *out_marker_ : *err_marker_).flush();
      if (!held.empty()) sink.data(stream, held);
    }
  }
  if (channel_->phase() == Channel::Phase::failed) {
    end_ = RunEnd::failed(channel_->error(), channel_->server_hung_up());
  } else if (was == State::draining) {
    end_ = RunEnd::exited(status_);
  } else {
    end_ = RunEnd::failed(answered_ ? "the worker's kept shell ended before the command did"
                                    : "the worker's kept shell ended");
  }
}

}  // namespace tpush::ssh
