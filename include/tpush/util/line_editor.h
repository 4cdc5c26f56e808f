// Reading lines at a terminal with editing and history (libedit), for the
// interactive prompt. Keys are read through tpush's own poll() beside its
// signalfd (util/signals.h), so Ctrl-C at the prompt drops the line typed so
// far without any signal handler, a hang-up or TERM ends the prompt, and the
// caller gets a call about once a second while the user thinks (kept sessions
// send their keepalives).
#pragma once

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>

struct editline;
struct history;

namespace tpush::util {

class LineEditor {
 public:
  // Edits on the terminal `in` (a tty fd), drawing on `out`; history is kept
  // in `history_file` (read now, written after every line; its directory is
  // made 0700 when missing). Reads ~/.editrc, as other libedit programs do.
  LineEditor(int in, std::FILE* out, std::filesystem::path history_file, int signal_fd);
  ~LineEditor();
  LineEditor(const LineEditor&) = delete;
  LineEditor& operator=(const LineEditor&) = delete;

  struct Read {
    enum class Kind { line, interrupted, end } kind = Kind::end;
    std::string text;  // the line, without its newline
  };
  // One line. `idle` runs about once a second while no key comes.
  Read read(const std::string& prompt, const std::function<void()>& idle = {});
  // Adds `line` to the history and saves it (a failure to save is reported
  // once on stderr, then the history stays in memory).
  void remember(const std::string& line);

  // Where the history lives: $XDG_STATE_HOME/tpush/history, else
  // ~/.local/state/tpush/history.
  static std::filesystem::path default_history_file();

 private:
  static int get_char(editline* el, wchar_t* c);
  static unsigned char on_interrupt(editline* el, int key);
  static char* prompt_text(editline* el);
  int next_char(wchar_t* c);

  editline* el_ = nullptr;
  history* history_ = nullptr;
  int in_, signal_fd_;
  std::filesystem::path history_file_;
  std::string prompt_;
  const std::function<void()>* idle_ = nullptr;
  bool interrupted_ = false, ended_ = false, save_failed_ = false;
};

}  // namespace tpush::util
