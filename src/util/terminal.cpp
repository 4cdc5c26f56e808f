#include "tpush/util/terminal.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

namespace tpush::util {

std::optional<std::size_t> terminal_columns(int fd) {
  winsize ws{};
  if (::isatty(fd) != 1 || ::ioctl(fd, TIOCGWINSZ, &ws) != 0 || ws.ws_col == 0) return std::nullopt;
  return ws.ws_col;
}

std::optional<std::pair<int, int>> terminal_size(int fd) {
  winsize ws{};
  if (::isatty(fd) != 1 || ::ioctl(fd, TIOCGWINSZ, &ws) != 0 || ws.ws_col == 0 || ws.ws_row == 0)
    return std::nullopt;
  return std::pair<int, int>(ws.ws_col, ws.ws_row);
}

RawTerminal::RawTerminal(int fd) : fd_(fd) {
  if (::isatty(fd) != 1 || tcgetattr(fd, &old_) != 0) return;
  termios raw = old_;
  cfmakeraw(&raw);
  saved_ = tcsetattr(fd, TCSADRAIN, &raw) == 0;
}

RawTerminal::~RawTerminal() {
  if (saved_) tcsetattr(fd_, TCSADRAIN, &old_);
}

int open_terminal(int terminal) {
  return terminal >= 0 ? fcntl(terminal, F_DUPFD_CLOEXEC, 3) : open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
}

std::optional<std::string> read_secret_from_tty(const std::string& prompt, int terminal) {
  const int fd = open_terminal(terminal);
  if (fd < 0) return std::nullopt;
  // Echo goes off (dropping anything typed ahead) before the prompt appears,
  // so an answer typed right after the prompt is never flushed away.
  termios old{};
  const bool have_termios = tcgetattr(fd, &old) == 0;
  if (have_termios) {
    termios quiet = old;
    quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
    tcsetattr(fd, TCSAFLUSH, &quiet);
  }
  [[maybe_unused]] auto w = write(fd, prompt.data(), prompt.size());
  std::string secret;
  char c;
  while (read(fd, &c, 1) == 1 && c != '\n' && c != '\r') secret += c;
  if (have_termios) tcsetattr(fd, TCSAFLUSH, &old);
  w = write(fd, "\n", 1);
  close(fd);
  return secret;
}

}  // namespace tpush::util
