#include "tpush/ssh/sftp/download.h"

#include <fcntl.h>
#include <libssh2.h>
#include <libssh2_sftp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "tpush/ssh/hangup.h"

namespace tpush::ssh {
namespace {


std::string base_name(std::string remote) {
  while (remote.size() > 1 && remote.back() == '/') remote.pop_back();
  const auto slash = remote.rfind('/');
  return slash == std::string::npos ? remote : remote.substr(slash + 1);
}

}  // namespace

std::filesystem::path download_target(const std::filesystem::path& local_dir, const std::string& label,
                                      const std::string& remote) {
  std::string folder = label;
  for (char& c : folder)
    if (c == '/') c = '_';
  if (folder.empty() || folder == "." || folder == "..") folder = "_" + folder;
  std::string name = base_name(remote);
  if (name.empty() || name == "/" || name == "." || name == ".." || name == "~") name = "root";
  return local_dir / folder / name;
}

SftpDownload::SftpDownload(LIBSSH2_SESSION* session, std::vector<DownloadRequest> requests, bool recursive,
                           bool preserve)
    : SftpTransfer(session), recursive_(recursive), preserve_(preserve), buf_(256u << 10) {
  // A stack: reversed, so the first request is fetched first.
  for (auto it = requests.rbegin(); it != requests.rend(); ++it) {
    Work w;
    w.remote = it->remote;
    w.local = it->local;
    w.root = true;
    queue_.push_back(std::move(w));
  }
}

SftpDownload::~SftpDownload() { remove_temp(); }

void SftpDownload::remove_temp() {
  if (local_fd_ >= 0) ::close(local_fd_);
  local_fd_ = -1;
  if (!temp_.empty()) {
    std::error_code ignored;
    std::filesystem::remove(temp_, ignored);
    temp_.clear();
  }
}

void SftpDownload::advance() {
  while (phase_ == Phase::running && step()) {
  }
}

bool SftpDownload::local_fail(const std::string& what, int err) {
  remove_temp();
  error_ = "local " + what + ": " + std::strerror(err);
  if (handle_) {
    pending_error_ = error_;
    step_ = Step::cleanup_close;
    return true;
  }
  phase_ = Phase::failed;
  wait_ = util::Wait::none;
  return true;
}

bool SftpDownload::fail_item(const std::string& path, const std::string& what, int rc) {
  remove_temp();
  fail(path, what, rc);
  if (hung_up_ || !handle_) return true;
  pending_error_ = error_;
  phase_ = Phase::running;
  step_ = Step::cleanup_close;
  return true;
}

bool SftpDownload::step() {
  switch (step_) {
    case Step::init:
      if (!init()) return false;
      step_ = Step::next;
      return true;
    case Step::next: return next_item();
    case Step::stat: return stat_item();
    case Step::opendir: return open_dir();
    case Step::readdir: return read_dir_entry();
    case Step::closedir: {
      if (!close_handle()) return false;
      step_ = Step::next;
      return true;
    }
    case Step::open: return open_file();
    case Step::read: return read_some();
    case Step::close: return close_file();
    case Step::cleanup_close: {
      if (!close_handle()) return false;
      error_ = pending_error_;
      phase_ = Phase::failed;
      wait_ = util::Wait::none;
      return true;
    }
    case Step::shutdown:
      if (!shutdown()) return false;
      phase_ = Phase::done;
      wait_ = util::Wait::none;
      return true;
  }
  return false;  // not reached: every step is handled above
}

bool SftpDownload::next_item() {
  if (queue_.empty()) {
    step_ = Step::shutdown;
    return true;
  }
  current_ = std::move(queue_.back());
  queue_.pop_back();
  step_ = current_.kind == Kind::file ? Step::open
          : current_.kind == Kind::dir ? Step::opendir
                                       : Step::stat;
  if (current_.kind == Kind::dir) {
    std::error_code ec;
    std::filesystem::create_directories(current_.local, ec);
    if (ec) {
      local_fail("mkdir " + current_.local.string(), ec.value());
      return true;
    }
  }
  return true;
}

bool SftpDownload::stat_item() {
  LIBSSH2_SFTP_ATTRIBUTES attrs{};
  const int rc = libssh2_sftp_stat_ex(sftp_, current_.remote.c_str(), length(current_.remote),
                                      LIBSSH2_SFTP_STAT, &attrs);
  if (would_block(rc)) return false;
  if (rc != 0) return fail_item(current_.remote, "cannot read", rc);
  current_.mode = attrs.permissions & 07777;
  current_.mtime = static_cast<std::time_t>(attrs.mtime);
  current_.atime = static_cast<std::time_t>(attrs.atime);
  if (LIBSSH2_SFTP_S_ISDIR(attrs.permissions)) {
    if (current_.kind == Kind::link) {  // a symlink to a directory inside a tree: not followed
      step_ = Step::next;
      return true;
    }
    if (!recursive_) return fail_item(current_.remote, "is a directory (use -r)", 0);
    current_.kind = Kind::dir;
    queue_.push_back(current_);
    step_ = Step::next;
    return true;
  }
  if (!LIBSSH2_SFTP_S_ISREG(attrs.permissions)) return fail_item(current_.remote, "not a regular file", 0);
  current_.kind = Kind::file;
  step_ = Step::open;
  return true;
}

bool SftpDownload::open_dir() {
  handle_ = libssh2_sftp_open_ex(sftp_, current_.remote.c_str(), length(current_.remote), 0, 0,
                                 LIBSSH2_SFTP_OPENDIR);
  if (!handle_) {
    const int rc = last_errno();
    if (would_block(rc)) return false;
    return fail_item(current_.remote, "cannot list", rc);
  }
  step_ = Step::readdir;
  return true;
}

bool SftpDownload::read_dir_entry() {
  char name[1024];
  LIBSSH2_SFTP_ATTRIBUTES attrs{};
  const int rc = libssh2_sftp_readdir_ex(handle_, name, sizeof name, nullptr, 0, &attrs);
  if (would_block(rc)) return false;
  if (rc < 0) return fail_item(current_.remote, "cannot list", rc);
  if (rc == 0) {
    step_ = Step::closedir;
    return true;
  }
  const std::string entry(name, static_cast<std::size_t>(rc));
  if (entry == "." || entry == "..") return true;
  Work w;
  w.remote = current_.remote + (current_.remote.back() == '/' ? "" : "/") + entry;
  w.local = current_.local / entry;
  w.mode = attrs.permissions & 07777;
  w.mtime = static_cast<std::time_t>(attrs.mtime);
  w.atime = static_cast<std::time_t>(attrs.atime);
  w.kind = LIBSSH2_SFTP_S_ISDIR(attrs.permissions)   ? Kind::dir
           : LIBSSH2_SFTP_S_ISREG(attrs.permissions) ? Kind::file
           : LIBSSH2_SFTP_S_ISLNK(attrs.permissions) ? Kind::link
                                                      : Kind::unknown;
  if (w.kind != Kind::unknown) queue_.push_back(std::move(w));  // sockets, fifos: skipped
  return true;
}

bool SftpDownload::open_file() {
  handle_ = libssh2_sftp_open_ex(sftp_, current_.remote.c_str(), length(current_.remote), LIBSSH2_FXF_READ, 0,
                                 LIBSSH2_SFTP_OPENFILE);
  if (!handle_) {
    const int rc = last_errno();
    if (would_block(rc)) return false;
    return fail_item(current_.remote, "cannot read", rc);
  }
  std::error_code ec;
  std::filesystem::create_directories(current_.local.parent_path(), ec);
  if (ec) {
    local_fail("mkdir " + current_.local.parent_path().string(), ec.value());
    return true;
  }
  temp_ = temp_name(current_.local.string());
  local_fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (local_fd_ < 0) {
    const int err = errno;
    temp_.clear();
    local_fail("create " + current_.local.string() + ".tpush-tmp-*", err);
    return true;
  }
  step_ = Step::read;
  return true;
}

bool SftpDownload::read_some() {
  const ssize_t n = libssh2_sftp_read(handle_, buf_.data(), buf_.size());
  if (n == LIBSSH2_ERROR_EAGAIN) {
    would_block(LIBSSH2_ERROR_EAGAIN);  // records the direction
    return false;
  }
  if (n < 0) return fail_item(current_.remote, "read failed", static_cast<int>(n));
  if (n == 0) {
    step_ = Step::close;
    return true;
  }
  std::size_t off = 0;
  while (off < static_cast<std::size_t>(n)) {
    const ssize_t w = ::write(local_fd_, buf_.data() + off, static_cast<std::size_t>(n) - off);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) {
      local_fail("write " + current_.local.string(), errno);
      return true;
    }
    off += static_cast<std::size_t>(w);
  }
  bytes_done_ += static_cast<std::uint64_t>(n);
  return true;
}

bool SftpDownload::close_file() {
  if (!close_handle()) return false;
  finish_file();
  if (phase_ == Phase::running) step_ = Step::next;
  return true;
}

void SftpDownload::finish_file() {
  const mode_t umask_now = [] {
    const mode_t m = ::umask(022);
    ::umask(m);
    return m;
  }();
  const mode_t mode = preserve_ ? current_.mode : (0644 & ~umask_now);
  if (::fchmod(local_fd_, mode) != 0) return void(local_fail("chmod " + current_.local.string(), errno));
  if (preserve_) {
    timespec times[2];
    times[0].tv_sec = current_.atime;
    times[0].tv_nsec = 0;
    times[1].tv_sec = current_.mtime;
    times[1].tv_nsec = 0;
    if (::futimens(local_fd_, times) != 0) return void(local_fail("set times of " + current_.local.string(), errno));
  }
  if (::close(local_fd_) != 0) {
    local_fd_ = -1;
    return void(local_fail("write " + current_.local.string(), errno));
  }
  local_fd_ = -1;
  if (::rename(temp_.c_str(), current_.local.c_str()) != 0)
    return void(local_fail("rename to " + current_.local.string(), errno));
  temp_.clear();
}

}  // namespace tpush::ssh
