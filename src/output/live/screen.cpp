#include "tpush/output/live/screen.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <clocale>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tpush/util/error.h"
#include "tpush/util/signals.h"

// Functions only: ncurses' macros (move, clear, erase, timeout...) would
// rewrite names in every file of a unity build after this one.
#define NCURSES_NOMACROS
#include <curses.h>

namespace tpush::output {
namespace {

enum LiveColourPair : short { kLiveRed = 1, kLiveGreen = 2, kLiveYellow = 3 };

}  // namespace

LiveScreen::LiveScreen(int tty) {
  const char* term = std::getenv("TERM");
  if (!term || !*term)
    throw UsageError("--live draws with ncurses, which needs to know the terminal: TERM is not set "
                     "(set it, e.g. TERM=xterm-256color, or drop --live)");
  in_fd_ = fcntl(tty, F_DUPFD_CLOEXEC, 3);
  const int out_fd = fcntl(tty, F_DUPFD_CLOEXEC, 3);
  in_ = in_fd_ >= 0 ? fdopen(in_fd_, "r") : nullptr;
  out_ = out_fd >= 0 ? fdopen(out_fd, "w") : nullptr;
  if (!in_ || !out_) {
    const int err = errno;
    if (in_) std::fclose(static_cast<FILE*>(in_)); else if (in_fd_ >= 0) ::close(in_fd_);
    if (out_) std::fclose(static_cast<FILE*>(out_)); else if (out_fd >= 0) ::close(out_fd);
    throw SetupError(std::string("--live: cannot open the terminal for ncurses: ") + std::strerror(err));
  }
  // ncursesw writes UTF-8 only when the locale's character type says so.
  const char* locale = std::setlocale(LC_CTYPE, nullptr);
  old_locale_ = locale ? locale : "C";
  std::setlocale(LC_CTYPE, "");
  {
    const util::KeepDispositions keep;
    use_env(FALSE);  // the size comes from the terminal (TIOCGWINSZ), not $LINES and $COLUMNS
    use_tioctl(TRUE);
    screen_ = newterm(term, static_cast<FILE*>(out_), static_cast<FILE*>(in_));
  }
  if (!screen_) {
    close();
    throw UsageError(std::string("--live: ncurses does not know the terminal TERM=") + term +
                     " (set TERM to a type in the terminfo database, e.g. xterm-256color, or drop --live)");
  }
  set_term(screen_);
  cbreak();  // not raw(): Ctrl-C still sends SIGINT, which the run's signalfd reads
  noecho();
  nonl();
  intrflush(stdscr, FALSE);
  keypad(stdscr, TRUE);
  nodelay(stdscr, TRUE);
  leaveok(stdscr, TRUE);
  curs_set(0);
  typeahead(-1);  // draw whole frames even while keys wait
  set_escdelay(25);
  termios modes{};
  if (tcgetattr(in_fd_, &modes) == 0) {  // Ctrl-S would stop the terminal, and every write the loop makes
    modes.c_iflag &= ~static_cast<tcflag_t>(IXON);
    tcsetattr(in_fd_, TCSANOW, &modes);
  }
  def_prog_mode();
  const char* no_color = std::getenv("NO_COLOR");
  colour_ = has_colors() && !(no_color && *no_color);
  if (colour_) {
    start_color();
    use_default_colors();
    init_pair(kLiveRed, COLOR_RED, -1);
    init_pair(kLiveGreen, COLOR_GREEN, -1);
    init_pair(kLiveYellow, COLOR_YELLOW, -1);
  }
}

LiveScreen::~LiveScreen() { close(); }

void LiveScreen::close() {
  if (screen_) {
    const util::KeepDispositions keep;
    set_term(screen_);
    endwin();  // the terminal's modes as they were, the normal screen back
    delscreen(screen_);
    screen_ = nullptr;
  }
  if (!old_locale_.empty()) std::setlocale(LC_CTYPE, old_locale_.c_str());
  old_locale_.clear();
  if (in_) std::fclose(static_cast<FILE*>(in_));
  if (out_) std::fclose(static_cast<FILE*>(out_));
  in_ = out_ = nullptr;
  in_fd_ = -1;
}

LiveKey LiveScreen::next_key() {
  if (!screen_) return LiveKey::none;
  switch (const int c = wgetch(stdscr)) {
    case ERR: return LiveKey::none;
    case KEY_UP: case 'k': case 'p' & 0x1f: return LiveKey::up;
    case KEY_DOWN: case 'j': case 'n' & 0x1f: return LiveKey::down;
    case KEY_PPAGE: case 'b': case 'b' & 0x1f: return LiveKey::page_up;
    case KEY_NPAGE: case ' ': case 'f' & 0x1f: return LiveKey::page_down;
    case KEY_HOME: case 'g': case '<': return LiveKey::home;
    case KEY_END: case 'G': case '>': return LiveKey::end;
    case KEY_LEFT: case 'h': return LiveKey::left;
    case KEY_RIGHT: case 'l': return LiveKey::right;
    case '\n': case '\r': case KEY_ENTER: case 'o': return LiveKey::open;
    case 27: case KEY_BACKSPACE: case 127: return LiveKey::back;
    case 'q': case 'Q': return LiveKey::quit;
    case 'l' & 0x1f: return LiveKey::redraw;
    default: return c == KEY_RESIZE ? LiveKey::redraw : LiveKey::other;
  }
}

bool LiveScreen::hung_up() const {
  if (!screen_) return true;
  pollfd p{in_fd_, POLLIN, 0};
  return poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR | POLLNVAL)) != 0;
}

bool LiveScreen::follow_size() {
  if (!screen_) return false;
  winsize size{};
  if (ioctl(in_fd_, TIOCGWINSZ, &size) != 0 || size.ws_row == 0 || size.ws_col == 0) return false;
  if (size.ws_row == LINES && size.ws_col == COLS) return false;
  resizeterm(size.ws_row, size.ws_col);
  return true;
}

void LiveScreen::repaint_all() {
  if (!screen_) return;
  reset_prog_mode();  // a shell may have changed the modes while tpush was stopped
  clearok(curscr, TRUE);
}

void LiveScreen::update() {
  if (screen_) wrefresh(stdscr);
}

int LiveScreen::rows() const { return screen_ ? LINES : 0; }
int LiveScreen::columns() const { return screen_ ? COLS : 0; }

void LiveScreen::clear() {
  if (screen_) werase(stdscr);
}

int LiveScreen::attributes(LiveStyle style) const {
  const auto pair = [this](short p, int otherwise) { return colour_ ? static_cast<int>(COLOR_PAIR(p)) : otherwise; };
  switch (style) {
    case LiveStyle::text: return A_NORMAL;
    case LiveStyle::title: return A_BOLD;
    case LiveStyle::heading: return A_UNDERLINE;
    case LiveStyle::cursor: return A_REVERSE;
    case LiveStyle::bad: return pair(kLiveRed, A_NORMAL) | A_BOLD;
    case LiveStyle::good: return pair(kLiveGreen, A_NORMAL);
    case LiveStyle::busy: return pair(kLiveYellow, A_NORMAL);
    case LiveStyle::error_text: return A_BOLD;
    case LiveStyle::footer: return A_REVERSE;
    case LiveStyle::note: return A_DIM;
  }
  return A_NORMAL;
}

void LiveScreen::put(int y, int x, std::string_view text, LiveStyle style) {
  if (!screen_) return;
  wattrset(stdscr, attributes(style));
  mvwaddnstr(stdscr, y, x, text.data(), static_cast<int>(text.size()));
  wattrset(stdscr, A_NORMAL);
}

void LiveScreen::fill(int y, LiveStyle style) {
  if (!screen_) return;
  mvwhline(stdscr, y, 0, static_cast<chtype>(' ') | static_cast<chtype>(attributes(style)), COLS);
}

}  // namespace tpush::output
