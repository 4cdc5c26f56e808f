#include "tpush/util/line_editor.h"

#include <histedit.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <cwchar>
#include <system_error>

#include "tpush/util/environment.h"
#include "tpush/util/key_wait.h"
#include "tpush/util/error.h"
#include "tpush/util/signals.h"

namespace tpush::util {
namespace {

constexpr int kIdleMs = 1000;
constexpr int kHistorySize = 1000;

LineEditor* editor_of(EditLine* el) {
  void* data = nullptr;
  el_get(el, EL_CLIENTDATA, &data);
  return static_cast<LineEditor*>(data);
}

}  // namespace

std::filesystem::path LineEditor::default_history_file() {
  return xdg_dir("XDG_STATE_HOME", ".local/state") / "history";
}

LineEditor::LineEditor(int in, std::FILE* out, std::filesystem::path history_file, int signal_fd)
    : in_(in), signal_fd_(signal_fd), history_file_(std::move(history_file)) {
  std::FILE* in_file = ::fdopen(::dup(in), "r");
  el_ = in_file ? el_init("tpush", in_file, out, stderr) : nullptr;
  history_ = history_init();
  if (!el_ || !history_) {
    if (el_) el_end(el_);
    if (history_) history_end(history_);
    throw SetupError("cannot start line editing at this terminal (libedit failed); give the command on the command "
                     "line instead");
  }
  HistEvent ev;
  history(history_, &ev, H_SETSIZE, kHistorySize);
  history(history_, &ev, H_SETUNIQUE, 1);
  history(history_, &ev, H_LOAD, history_file_.c_str());  // none yet: nothing to load
  el_set(el_, EL_CLIENTDATA, this);
  el_set(el_, EL_EDITOR, "emacs");
  el_set(el_, EL_HIST, history, history_);
  el_set(el_, EL_PROMPT, &LineEditor::prompt_text);
  el_set(el_, EL_GETCFN, &LineEditor::get_char);
  // The wide call: libedit keeps these pointers. The narrow el_set copies the name and
  // help text and never frees the copies (libedit's own comment says so).
  el_wset(el_, EL_ADDFN, L"tpush-interrupt", L"drop the line typed so far", &LineEditor::on_interrupt);
  el_set(el_, EL_BIND, "^C", "tpush-interrupt", nullptr);
  el_source(el_, nullptr);  // ~/.editrc
}

LineEditor::~LineEditor() {
  el_end(el_);  // closes nothing of ours but the dup'ed input
  history_end(history_);
}

char* LineEditor::prompt_text(EditLine* el) { return editor_of(el)->prompt_.data(); }

// Ctrl-C: a SIGINT the signalfd read (get_char hands it in as ^C), or ^C as a
// key where the terminal does not make it a signal. The line ends, unused.
unsigned char LineEditor::on_interrupt(EditLine* el, int) {
  editor_of(el)->interrupted_ = true;
  return CC_NEWLINE;
}

int LineEditor::get_char(EditLine* el, wchar_t* c) { return editor_of(el)->next_char(c); }

// A key from the terminal, decoded as the locale says (UTF-8); meanwhile the
// signalfd is watched and `idle` runs once a second. 1: a key; 0: the end.
int LineEditor::next_char(wchar_t* c) {
  std::mbstate_t state{};
  for (;;) {
    const KeyWait w = wait_key_or_signal(in_, signal_fd_, kIdleMs);
    if (w == KeyWait::failed || w == KeyWait::keys_gone) return 0;
    if (w == KeyWait::timeout) {
      if (idle_ && *idle_) (*idle_)();
      continue;
    }
    if (w == KeyWait::signal) {
      const auto pending = drain_signals(signal_fd_);
      if (pending.terminate || pending.hang_up) ended_ = true;
      if (ended_) return 0;
      *c = L'\x03';  // bound to tpush-interrupt
      return 1;
    }
    char byte;
    const ssize_t got = ::read(in_, &byte, 1);
    if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN)) return 0;
    if (got < 0) continue;
    const std::size_t used = std::mbrtowc(c, &byte, 1, &state);
    if (used == static_cast<std::size_t>(-2)) continue;  // more bytes to come
    if (used == static_cast<std::size_t>(-1)) {
      state = {};
      *c = static_cast<unsigned char>(byte);  // not the locale's: take the byte
    }
    return 1;
  }
}

LineEditor::Read LineEditor::read(const std::string& prompt, const std::function<void()>& idle) {
  prompt_ = prompt;
  idle_ = &idle;
  interrupted_ = false;
  el_resize(el_);  // the window may have changed while a command ran
  // The editor's terminal mode before the prompt shows: libedit would print
  // the prompt first, and a Ctrl-D typed in between (as canonical mode's EOF)
  // would vanish in the switch.
  el_set(el_, EL_PREP_TERM, 1);
  int count = 0;
  const char* line = el_gets(el_, &count);
  el_set(el_, EL_PREP_TERM, 0);
  idle_ = nullptr;
  if (interrupted_) return {Read::Kind::interrupted, {}};
  if (!line || count <= 0 || ended_) return {Read::Kind::end, {}};
  std::string text(line, static_cast<std::size_t>(count));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  return {Read::Kind::line, std::move(text)};
}

void LineEditor::remember(const std::string& line) {
  HistEvent ev;
  history(history_, &ev, H_ENTER, line.c_str());
  if (save_failed_) return;
  std::error_code ec;
  const auto dir = history_file_.parent_path();
  if (!dir.empty() && !std::filesystem::exists(dir, ec)) {
    std::filesystem::create_directories(dir, ec);
    if (!ec) std::filesystem::permissions(dir, std::filesystem::perms::owner_all, ec);
  }
  if (history(history_, &ev, H_SAVE, history_file_.c_str()) < 0) {
    save_failed_ = true;
    std::fprintf(stderr, "tpush: cannot save the prompt's history in %s (%s); it stays in memory for this session\n",
                 history_file_.c_str(), ec ? ec.message().c_str() : "not writable");
  }
}

}  // namespace tpush::util
