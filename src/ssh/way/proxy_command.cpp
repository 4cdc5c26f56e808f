#include "tpush/ssh/way/proxy_command.h"

#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "tpush/util/child_reaper.h"
#include "tpush/util/environment.h"
#include "tpush/util/string.h"

namespace tpush::ssh {
namespace {

constexpr std::size_t kStderrTail = 4096;

// Characters that make a line need a shell (quoting, expansion, redirection,
// control operators, globbing).
bool needs_shell(const std::string& line) {
  return line.find_first_of("\"'\\$`|&;<>()*?[]{}~#!\n") != std::string::npos;
}

}  // namespace

std::string proxy_stderr_summary(std::string_view text) {
  // The last line that starts with "ERROR:" (gcloud's own words, which a
  // traceback may follow), else the last non-empty line; one line, printable.
  std::string_view line, error;
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t nl = std::min(text.find('\n', start), text.size());
    const std::string_view l = util::trim(text.substr(start, nl - start));
    if (!l.empty()) line = l;
    if (l.starts_with("ERROR:")) error = l;
    start = nl + 1;
  }
  std::string said(error.empty() ? line : error);
  if (said.size() > 300) said = said.substr(0, 300) + "...";
  return util::printable(said);
}

ProxyCommand ProxyCommand::from_line(const std::string& line) {
  ProxyCommand c;
  c.shown = line;
  if (!needs_shell(line)) {
    for (auto& word : util::split(line, ' '))
      if (!util::trim(word).empty()) c.argv.emplace_back(util::trim(word));
  }
  if (c.argv.empty() || needs_shell(line)) {
    c.argv = {util::env_value("SHELL").value_or("/bin/sh"), "-c", "exec " + line};
  }
  return c;
}

ProxyCommand ProxyCommand::from_argv(std::vector<std::string> argv, std::string shown) {
  return {std::move(argv), std::move(shown)};
}

ProxyCommandTransport::ProxyCommandTransport(ProxyCommand command, util::ChildReaper* reaper)
    : command_(std::move(command)), reaper_(reaper) {}

ProxyCommandTransport::~ProxyCommandTransport() { close(); }

int ProxyCommandTransport::open() {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    start_error_ = std::string("cannot create a socketpair for the proxy command: ") + std::strerror(errno);
    return -1;
  }
  const bool started = open_on(pair[1]);
  ::close(pair[1]);
  if (!started) {
    ::close(pair[0]);
    return -1;
  }
  return pair[0];  // the session owns it from here
}

bool ProxyCommandTransport::open_on(int fd) {
  stderr_fd_ = ::memfd_create("tpush-proxy-stderr", MFD_CLOEXEC);
  util::ChildSpec spec;
  spec.program = command_.argv.front();
  spec.args.assign(command_.argv.begin() + 1, command_.argv.end());
  spec.stdin_fd = spec.stdout_fd = fd;
  spec.stderr_fd = stderr_fd_ >= 0 ? stderr_fd_ : util::kDevNull;
  try {
    child_ = util::Child::spawn(spec);
  } catch (const std::exception& e) {
    start_error_ = "proxy command '" + command_.shown + "': " + e.what();
    return false;
  }
  return true;
}

std::string ProxyCommandTransport::stderr_tail() const {
  if (stderr_fd_ < 0) return {};
  struct stat st {};
  if (::fstat(stderr_fd_, &st) != 0 || st.st_size <= 0) return {};
  const off_t from = st.st_size > static_cast<off_t>(kStderrTail) ? st.st_size - static_cast<off_t>(kStderrTail) : 0;
  std::string text(static_cast<std::size_t>(st.st_size - from), '\0');
  const ssize_t n = ::pread(stderr_fd_, text.data(), text.size(), from);
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return text;
}

std::string ProxyCommandTransport::notes() const { return proxy_stderr_summary(stderr_tail()); }

std::string ProxyCommandTransport::failure() const {
  if (!start_error_.empty()) return start_error_;
  // Only a proxy that ended is the cause; one still running just carried the
  // server's own refusal.
  if (child_.pid() <= 0 || !child_.poll()) return {};
  const int status = child_.status().value_or(0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return {};
  const std::string said = notes();
  return "proxy command '" + command_.shown + "' " +
         (WIFSIGNALED(status) ? util::describe_wait_status(status) : "exited " + std::to_string(WEXITSTATUS(status))) +
         (said.empty() ? "" : ": " + said);
}

std::string ProxyCommandTransport::unanswered() const {
  if (std::string cause = failure(); !cause.empty()) return cause;
  const std::string said = notes();  // it may still be exiting: what it said is the cause
  return "proxy command '" + command_.shown + "' closed the connection before the server spoke" +
         (said.empty() ? "" : ": " + said);
}

void ProxyCommandTransport::close() {
  if (stderr_fd_ >= 0 && spdlog::should_log(spdlog::level::debug))
    if (const std::string said = stderr_tail(); !said.empty())
      spdlog::debug("proxy command '{}' wrote on stderr: {}", command_.shown, util::printable(said));
  if (child_.pid() > 0) {
    if (reaper_) reaper_->adopt(std::move(child_));
    else child_ = util::Child();  // kills and reaps
  }
  if (stderr_fd_ >= 0) {
    ::close(stderr_fd_);
    stderr_fd_ = -1;
  }
}

}  // namespace tpush::ssh
