#include "tpush/ssh/sftp_upload.h"

#include <fcntl.h>
#include <libssh2.h>

#include "tpush/ssh/hangup.h"
#include <libssh2_sftp.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

#include "tpush/util/error.h"

namespace tpush::ssh {
namespace {


unsigned int len(const std::string& s) { return static_cast<unsigned int>(s.size()); }

bool trivial_dir(const std::string& d) { return d.empty() || d == "/" || d == "." || d == "~"; }

}  // namespace

// ---- SharedBytes ---------------------------------------------------------------

std::shared_ptr<const SharedBytes> SharedBytes::map_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw SetupError("cannot read " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const int err = errno;
    ::close(fd);
    throw SetupError("cannot read " + path + ": " + (S_ISREG(st.st_mode) ? std::strerror(err) : "not a regular file"));
  }
  std::shared_ptr<SharedBytes> b(new SharedBytes());
  b->size_ = static_cast<std::uint64_t>(st.st_size);
  if (b->size_ > 0 && b->size_ < (1u << 20)) {  // small: read into memory
    b->owned_.resize(b->size_);
    std::size_t off = 0;
    while (off < b->owned_.size()) {
      const ssize_t n = ::read(fd, b->owned_.data() + off, b->owned_.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int err = n < 0 ? errno : EIO;
        ::close(fd);
        throw SetupError("cannot read " + path + ": " + (n < 0 ? std::strerror(err) : "file shrank while reading"));
      }
      off += static_cast<std::size_t>(n);
    }
    b->data_ = b->owned_.data();
  } else if (b->size_ > 0) {
    void* p = ::mmap(nullptr, b->size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      throw SetupError("cannot read " + path + ": " + std::strerror(err));
    }
    ::madvise(p, b->size_, MADV_SEQUENTIAL);
    b->data_ = static_cast<const char*>(p);
    b->mapped_ = true;
  }
  ::close(fd);
  return b;
}

std::shared_ptr<const SharedBytes> SharedBytes::from_string(std::string bytes) {
  std::shared_ptr<SharedBytes> b(new SharedBytes());
  b->owned_ = std::move(bytes);
  b->data_ = b->owned_.data();
  b->size_ = b->owned_.size();
  return b;
}

SharedBytes::~SharedBytes() {
  if (mapped_) ::munmap(const_cast<char*>(data_), size_);
}

// ---- SftpTransfer ---------------------------------------------------------------

std::string SftpTransfer::status_text(unsigned long code) {
  switch (code) {
    case LIBSSH2_FX_EOF: return "unexpected end of file";
    case LIBSSH2_FX_NO_SUCH_FILE: return "no such file or directory";
    case LIBSSH2_FX_PERMISSION_DENIED: return "permission denied";
    // OpenSSH's sftp-server (protocol 3) sends this one code for ENOSPC, EROFS,
    // EEXIST, EISDIR, ... and no detail.
    case LIBSSH2_FX_FAILURE: return "failure (the SFTP server gives no detail)";
    case LIBSSH2_FX_BAD_MESSAGE: return "bad message (invalid name?)";
    case LIBSSH2_FX_NO_CONNECTION: return "no connection";
    case LIBSSH2_FX_CONNECTION_LOST: return "connection lost";
    case LIBSSH2_FX_OP_UNSUPPORTED: return "operation not supported by the server";
    case LIBSSH2_FX_INVALID_HANDLE: return "invalid handle";
    case LIBSSH2_FX_NO_SUCH_PATH: return "no such path";
    case LIBSSH2_FX_FILE_ALREADY_EXISTS: return "file exists";
    case LIBSSH2_FX_WRITE_PROTECT: return "write-protected";
    case LIBSSH2_FX_NO_MEDIA: return "no media";
    case LIBSSH2_FX_NO_SPACE_ON_FILESYSTEM: return "no space left on device";
    case LIBSSH2_FX_QUOTA_EXCEEDED: return "quota exceeded";
    case LIBSSH2_FX_DIR_NOT_EMPTY: return "directory not empty";
    case LIBSSH2_FX_NOT_A_DIRECTORY: return "not a directory";
    case LIBSSH2_FX_INVALID_FILENAME: return "invalid file name";
    case LIBSSH2_FX_LINK_LOOP: return "too many levels of symbolic links";
    default: return "SFTP error " + std::to_string(code);
  }
}

bool SftpTransfer::would_block(int rc) {
  if (rc != LIBSSH2_ERROR_EAGAIN) return false;
  wait_ = (libssh2_session_block_directions(session_) & LIBSSH2_SESSION_BLOCK_OUTBOUND) ? Wait::write
                                                                                        : Wait::read;
  return true;
}

bool SftpTransfer::close_handle(int* rc) {
  const int result = libssh2_sftp_close_handle(handle_);
  if (would_block(result)) return false;
  handle_ = nullptr;
  if (rc) *rc = result;
  return true;
}

bool SftpTransfer::bare_failure(int rc) const {
  return rc == LIBSSH2_ERROR_SFTP_PROTOCOL && libssh2_sftp_last_error(sftp_) == LIBSSH2_FX_FAILURE;
}

int SftpTransfer::last_errno() const { return libssh2_session_last_errno(session_); }

void SftpTransfer::fail(const std::string& path, const std::string& what, int rc) {
  std::string detail;
  if (rc == LIBSSH2_ERROR_SFTP_PROTOCOL && sftp_) {
    detail = status_text(libssh2_sftp_last_error(sftp_));
  } else if (rc == LIBSSH2_ERROR_SOCKET_DISCONNECT) {
    detail = "the server closed the connection";
  } else if (is_hangup(rc)) {
    detail = "the network connection failed";
  } else if (rc != 0) {
    char* msg = nullptr;
    libssh2_session_last_error(session_, &msg, nullptr, 0);
    detail = msg && *msg ? msg : "libssh2 error " + std::to_string(rc);
  }
  hung_up_ = hung_up_ || is_hangup(rc);
  error_ = (path.empty() ? "" : path + ": ") + what + (detail.empty() ? "" : ": " + detail);
  phase_ = Phase::failed;
  wait_ = Wait::none;
}

bool SftpTransfer::init() {
  sftp_ = libssh2_sftp_init(session_);
  if (sftp_) return true;
  const int rc = last_errno();
  if (!would_block(rc)) fail("", "cannot start SFTP (is the sftp subsystem enabled in sshd?)", rc);
  return false;
}

bool SftpTransfer::shutdown() {
  const int rc = libssh2_sftp_shutdown(sftp_);
  if (would_block(rc)) return false;
  sftp_ = nullptr;
  return true;
}

void SftpTransfer::release() {
  // Freeing the session frees the SFTP structure (its channel's destructor) but
  // not an open file handle, and closing one needs the network. An abandoned
  // handle (interrupt, lost connection) is kept here, reachable, for the rest
  // of the run: one small allocation per such worker, and no leak report.
  static std::vector<LIBSSH2_SFTP_HANDLE*> abandoned;
  if (handle_) abandoned.push_back(handle_);
  handle_ = nullptr;
  sftp_ = nullptr;
}

// ---- SftpUpload -------------------------------------------------------------------

std::string remote_parent(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const auto slash = p.rfind('/');
  if (slash == std::string::npos) return "";
  if (slash == 0) return "/";
  return p.substr(0, slash);
}

std::string SftpUpload::temp_name(const std::string& target) {
  static std::mt19937_64 rng{std::random_device{}()};
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "%012llx",
                static_cast<unsigned long long>(rng() & 0xffffffffffffULL));
  return target + ".tpush-tmp-" + suffix;
}

SftpUpload::SftpUpload(LIBSSH2_SESSION* session, std::shared_ptr<const std::vector<UploadItem>> items,
                       std::size_t window)
    : SftpTransfer(session), shared_items_(std::move(items)), items_(*shared_items_), window_(std::max<std::size_t>(window, 32u << 10)) {}

void SftpUpload::advance() {
  while (phase_ == Phase::running) {
    const Step before = step_;
    const std::size_t index_before = index_;
    const std::uint64_t offset_before = offset_;
    const std::size_t stack_before = dir_stack_.size();
    step();
    if (phase_ != Phase::running) return;
    if (step_ == before && index_ == index_before && offset_ == offset_before &&
        dir_stack_.size() == stack_before)
      return;  // waiting (would_block set the direction)
  }
}

void SftpUpload::start_ensure(const std::string& dir) {
  dir_stack_.clear();
  if (!trivial_dir(dir) && !dirs_made_.count(dir)) dir_stack_.push_back(dir);
  step_ = Step::ensure_dir;
}

bool SftpUpload::cancel() {
  if (phase_ != Phase::running) return false;
  cancelled_ = true;
  return true;
}

void SftpUpload::fail_item(const std::string& path, const std::string& what, int rc) {
  fail(path, what, rc);  // sets phase failed and error_
  if (hung_up_) return;  // nothing more can be said to this server
  // Clean up before reporting: close the handle, remove the temporary file.
  pending_error_ = error_;
  phase_ = Phase::running;
  step_ = handle_ ? Step::cleanup_close : Step::cleanup_unlink;
}

void SftpUpload::step() {
  switch (step_) {
    case Step::init:
      if (!init()) return;
      step_ = Step::next;
      return;

    case Step::next: {
      if (cancelled_ && index_ < items_.size()) {
        fail(items_[index_].remote, "interrupted", 0);  // nothing of it exists yet
        return;
      }
      if (index_ == items_.size()) {
        step_ = Step::shutdown;
        return;
      }
      const UploadItem& item = items_[index_];
      if (!item.bytes) {
        start_ensure(item.remote);
        return;
      }
      temp_ = temp_name(item.remote);
      offset_ = 0;
      reopen_after_dirs_ = false;
      step_ = Step::open;
      return;
    }

    case Step::ensure_dir: {
      if (dir_stack_.empty()) {  // every directory exists now
        if (!items_[index_].bytes) {
          ++index_;
          step_ = Step::next;
        } else {
          step_ = Step::open;
        }
        return;
      }
      const std::string top = dir_stack_.back();
      if (trivial_dir(top) || dirs_made_.count(top)) {
        dir_stack_.pop_back();
        return;
      }
      const UploadItem& item = items_[index_];
      const long mode = (!item.bytes && item.preserve) ? item.mode : 0755;
      const int rc = libssh2_sftp_mkdir_ex(sftp_, top.c_str(), len(top), mode);
      if (would_block(rc)) return;
      if (rc == 0) {
        dirs_made_.insert(top);
        dir_stack_.pop_back();
        return;
      }
      if (rc == LIBSSH2_ERROR_SFTP_PROTOCOL && libssh2_sftp_last_error(sftp_) == LIBSSH2_FX_NO_SUCH_FILE &&
          !trivial_dir(remote_parent(top))) {
        dir_stack_.push_back(remote_parent(top));  // make its parent first
        return;
      }
      if (is_hangup(rc)) return fail_item(top, "cannot create directory", rc);
      ensure_rc_ = rc;  // maybe it exists already: look
      pending_path_ = rc == LIBSSH2_ERROR_SFTP_PROTOCOL ? status_text(libssh2_sftp_last_error(sftp_)) : "";
      step_ = Step::ensure_dir_stat;
      return;
    }

    case Step::ensure_dir_stat: {
      const std::string& top = dir_stack_.back();
      LIBSSH2_SFTP_ATTRIBUTES attrs{};
      const int rc = libssh2_sftp_stat_ex(sftp_, top.c_str(), len(top), LIBSSH2_SFTP_STAT, &attrs);
      if (would_block(rc)) return;
      if (rc == 0 && (attrs.flags & LIBSSH2_SFTP_ATTR_PERMISSIONS) && LIBSSH2_SFTP_S_ISDIR(attrs.permissions)) {
        dirs_made_.insert(top);
        dir_stack_.pop_back();
        step_ = Step::ensure_dir;
        return;
      }
      if (rc == 0) return fail_item(top, "not a directory", 0);
      if (is_hangup(rc)) return fail_item(top, "cannot create directory", rc);
      return fail_item(top, "cannot create directory" + (pending_path_.empty() ? "" : ": " + pending_path_), 0);
    }

    case Step::open: {
      const UploadItem& item = items_[index_];
      handle_ = libssh2_sftp_open_ex(sftp_, temp_.c_str(), len(temp_),
                                     LIBSSH2_FXF_WRITE | LIBSSH2_FXF_CREAT | LIBSSH2_FXF_TRUNC | LIBSSH2_FXF_EXCL,
                                     item.mode, LIBSSH2_SFTP_OPENFILE);
      if (handle_) {
        step_ = Step::write;
        return;
      }
      const int rc = last_errno();
      if (would_block(rc)) return;
      const std::string parent = remote_parent(item.remote);
      if (rc == LIBSSH2_ERROR_SFTP_PROTOCOL && libssh2_sftp_last_error(sftp_) == LIBSSH2_FX_NO_SUCH_FILE &&
          !reopen_after_dirs_ && !trivial_dir(parent) && !dirs_made_.count(parent)) {
        reopen_after_dirs_ = true;  // mkdir -p its parents, then try once more
        start_ensure(parent);
        return;
      }
      // Nothing was created: report without cleaning up.
      fail(item.remote, "cannot create a temporary file beside it", rc);
      return;
    }

    case Step::write: {
      const UploadItem& item = items_[index_];
      const std::uint64_t size = item.bytes->size();
      if (offset_ >= size) {
        step_ = Step::close;
        return;
      }
      const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(size - offset_, window_));
      const ssize_t rc = libssh2_sftp_write(handle_, item.bytes->data() + offset_, n);
      if (rc == LIBSSH2_ERROR_EAGAIN || rc == 0) {
        would_block(LIBSSH2_ERROR_EAGAIN);
        return;
      }
      if (rc < 0) {
        if (bare_failure(static_cast<int>(rc)))
          return fail_item(item.remote, "write failed (no space left on the device?)", 0);
        return fail_item(item.remote, "write failed", static_cast<int>(rc));
      }
      offset_ += static_cast<std::uint64_t>(rc);
      bytes_done_ += static_cast<std::uint64_t>(rc);
      // Between writes is the safe point to stop: closing the handle drops the
      // requests still in flight.
      if (cancelled_ && offset_ < size) return fail_item(item.remote, "interrupted", 0);
      return;
    }

    case Step::close: {
      int rc = 0;
      if (!close_handle(&rc)) return;
      if (rc != 0) {
        if (bare_failure(rc)) return fail_item(items_[index_].remote, "close failed (no space left on the device?)", 0);
        return fail_item(items_[index_].remote, "close failed", rc);
      }
      step_ = items_[index_].preserve ? Step::setstat : Step::rename;
      return;
    }

    case Step::setstat: {
      const UploadItem& item = items_[index_];
      LIBSSH2_SFTP_ATTRIBUTES attrs{};
      attrs.flags = LIBSSH2_SFTP_ATTR_PERMISSIONS | LIBSSH2_SFTP_ATTR_ACMODTIME;
      attrs.permissions = item.mode;
      attrs.atime = static_cast<unsigned long>(item.atime);
      attrs.mtime = static_cast<unsigned long>(item.mtime);
      const int rc = libssh2_sftp_stat_ex(sftp_, temp_.c_str(), len(temp_), LIBSSH2_SFTP_SETSTAT, &attrs);
      if (would_block(rc)) return;
      if (rc != 0) return fail_item(item.remote, "cannot set mode and times", rc);
      step_ = Step::rename;
      return;
    }

    case Step::rename: {
      const UploadItem& item = items_[index_];
      // posix-rename@openssh.com is rename(2): atomic, replaces the target. Plain
      // SFTP v3 rename (link + unlink in OpenSSH) refuses an existing target, and
      // libssh2's OVERWRITE/ATOMIC flags are only sent in protocol 5+.
      const int rc = libssh2_sftp_posix_rename_ex(sftp_, temp_.c_str(), len(temp_), item.remote.c_str(),
                                                  len(item.remote));
      if (would_block(rc)) return;
      if (rc != 0) {
        if (bare_failure(rc))
          return fail_item(item.remote, "cannot replace it (is it a directory? end DEST with / to copy into it)", 0);
        return fail_item(item.remote, "cannot move the temporary file over it", rc);
      }
      ++index_;
      step_ = Step::next;
      return;
    }

    case Step::cleanup_close: {
      if (!close_handle()) return;
      step_ = Step::cleanup_unlink;
      return;
    }

    case Step::cleanup_unlink: {
      if (!temp_.empty() && items_[index_].bytes) {
        const int rc = libssh2_sftp_unlink_ex(sftp_, temp_.c_str(), len(temp_));
        if (would_block(rc)) return;
      }
      error_ = pending_error_;
      phase_ = Phase::failed;
      wait_ = Wait::none;
      return;
    }

    case Step::shutdown:
      if (!shutdown()) return;
      phase_ = Phase::done;
      wait_ = Wait::none;
      return;
  }
}

}  // namespace tpush::ssh
