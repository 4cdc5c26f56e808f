#include "tpush/ssh/sftp/upload.h"

#include <libssh2.h>
#include <libssh2_sftp.h>

#include <algorithm>

#include "tpush/ssh/hangup.h"
#include "tpush/ssh/session_wait.h"

namespace tpush::ssh {
namespace {


bool trivial_dir(const std::string& d) { return d.empty() || d == "/" || d == "." || d == "~"; }

}  // namespace

// ---- SftpUpload -------------------------------------------------------------------

std::string remote_parent(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const auto slash = p.rfind('/');
  if (slash == std::string::npos) return "";
  if (slash == 0) return "/";
  return p.substr(0, slash);
}

SftpUpload::SftpUpload(LIBSSH2_SESSION* session, std::shared_ptr<const std::vector<UploadItem>> items,
                       std::size_t window)
    : SftpTransfer(session), shared_items_(std::move(items)), items_(*shared_items_), window_(std::max<std::size_t>(window, 32u << 10)) {}

void SftpUpload::advance() {
  while (phase_ == Phase::running && step()) {
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

bool SftpUpload::fail_item(const std::string& path, const std::string& what, int rc) {
  fail(path, what, rc);  // sets phase failed and error_
  if (hung_up_) return true;  // nothing more can be said to this server
  // Clean up before reporting: close the handle, remove the temporary file.
  pending_error_ = error_;
  phase_ = Phase::running;
  step_ = handle_ ? Step::cleanup_close : Step::cleanup_unlink;
  return true;
}

bool SftpUpload::step() {
  switch (step_) {
    case Step::init:
      if (!init()) return false;
      step_ = Step::next;
      return true;
    case Step::next: return next_item();
    case Step::ensure_dir: return make_next_dir();
    case Step::ensure_dir_stat: return check_existing_dir();
    case Step::open: return open_temp();
    case Step::write: return write_some();
    case Step::close: return close_temp();
    case Step::setstat: return set_mode_and_times();
    case Step::rename: return rename_over_target();
    case Step::cleanup_close: {
      if (!close_handle()) return false;
      step_ = Step::cleanup_unlink;
      return true;
    }
    case Step::cleanup_unlink: return remove_temp_and_fail();
    case Step::shutdown:
      if (!shutdown()) return false;
      phase_ = Phase::done;
      wait_ = util::Wait::none;
      return true;
  }
  return false;  // not reached: every step is handled above
}

bool SftpUpload::next_item() {
  if (cancelled_ && index_ < items_.size()) {
    fail(items_[index_].remote, "interrupted", 0);  // nothing of it exists yet
    return true;
  }
  if (index_ == items_.size()) {
    step_ = Step::shutdown;
    return true;
  }
  const UploadItem& item = items_[index_];
  if (!item.bytes) {
    start_ensure(item.remote);
    return true;
  }
  temp_ = temp_name(item.remote);
  offset_ = 0;
  reopen_after_dirs_ = false;
  step_ = Step::open;
  return true;
}

bool SftpUpload::make_next_dir() {
  if (dir_stack_.empty()) {  // every directory exists now
    if (!items_[index_].bytes) {
      ++index_;
      step_ = Step::next;
    } else {
      step_ = Step::open;
    }
    return true;
  }
  const std::string top = dir_stack_.back();
  if (trivial_dir(top) || dirs_made_.count(top)) {
    dir_stack_.pop_back();
    return true;
  }
  const UploadItem& item = items_[index_];
  const long mode = (!item.bytes && item.preserve) ? item.mode : 0755;
  const int rc = libssh2_sftp_mkdir_ex(sftp_, top.c_str(), length(top), mode);
  if (would_block(rc)) return false;
  if (rc == 0) {
    dirs_made_.insert(top);
    dir_stack_.pop_back();
    return true;
  }
  if (rc == LIBSSH2_ERROR_SFTP_PROTOCOL && libssh2_sftp_last_error(sftp_) == LIBSSH2_FX_NO_SUCH_FILE &&
      !trivial_dir(remote_parent(top))) {
    dir_stack_.push_back(remote_parent(top));  // make its parent first
    return true;
  }
  if (is_hangup(rc)) return fail_item(top, "cannot create directory", rc);
  ensure_rc_ = rc;  // maybe it exists already: look
  pending_path_ = rc == LIBSSH2_ERROR_SFTP_PROTOCOL ? status_text(libssh2_sftp_last_error(sftp_)) : "";
  step_ = Step::ensure_dir_stat;
  return true;
}

bool SftpUpload::check_existing_dir() {
  const std::string& top = dir_stack_.back();
  LIBSSH2_SFTP_ATTRIBUTES attrs{};
  const int rc = libssh2_sftp_stat_ex(sftp_, top.c_str(), length(top), LIBSSH2_SFTP_STAT, &attrs);
  if (would_block(rc)) return false;
  if (rc == 0 && (attrs.flags & LIBSSH2_SFTP_ATTR_PERMISSIONS) && LIBSSH2_SFTP_S_ISDIR(attrs.permissions)) {
    dirs_made_.insert(top);
    dir_stack_.pop_back();
    step_ = Step::ensure_dir;
    return true;
  }
  if (rc == 0) return fail_item(top, "not a directory", 0);
  if (is_hangup(rc)) return fail_item(top, "cannot create directory", rc);
  return fail_item(top, "cannot create directory" + (pending_path_.empty() ? "" : ": " + pending_path_), 0);
}

bool SftpUpload::open_temp() {
  const UploadItem& item = items_[index_];
  handle_ = libssh2_sftp_open_ex(sftp_, temp_.c_str(), length(temp_),
                                 LIBSSH2_FXF_WRITE | LIBSSH2_FXF_CREAT | LIBSSH2_FXF_TRUNC | LIBSSH2_FXF_EXCL,
                                 item.mode, LIBSSH2_SFTP_OPENFILE);
  if (handle_) {
    step_ = Step::write;
    return true;
  }
  const int rc = last_errno();
  if (would_block(rc)) return false;
  const std::string parent = remote_parent(item.remote);
  if (rc == LIBSSH2_ERROR_SFTP_PROTOCOL && libssh2_sftp_last_error(sftp_) == LIBSSH2_FX_NO_SUCH_FILE &&
      !reopen_after_dirs_ && !trivial_dir(parent) && !dirs_made_.count(parent)) {
    reopen_after_dirs_ = true;  // mkdir -p its parents, then try once more
    start_ensure(parent);
    return true;
  }
  // Nothing was created: report without cleaning up.
  fail(item.remote, "cannot create a temporary file beside it", rc);
  return true;
}

bool SftpUpload::write_some() {
  const UploadItem& item = items_[index_];
  const std::uint64_t size = item.bytes->size();
  if (offset_ >= size) {
    step_ = Step::close;
    return true;
  }
  const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(size - offset_, window_));
  const ssize_t rc = libssh2_sftp_write(handle_, item.bytes->data() + offset_, n);
  if (rc == LIBSSH2_ERROR_EAGAIN || rc == 0) {
    would_block(LIBSSH2_ERROR_EAGAIN);  // records the direction
    return false;
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
  return true;
}

bool SftpUpload::close_temp() {
  int rc = 0;
  if (!close_handle(&rc)) return false;
  if (rc != 0) {
    if (bare_failure(rc)) return fail_item(items_[index_].remote, "close failed (no space left on the device?)", 0);
    return fail_item(items_[index_].remote, "close failed", rc);
  }
  step_ = items_[index_].preserve ? Step::setstat : Step::rename;
  return true;
}

bool SftpUpload::set_mode_and_times() {
  const UploadItem& item = items_[index_];
  LIBSSH2_SFTP_ATTRIBUTES attrs{};
  attrs.flags = LIBSSH2_SFTP_ATTR_PERMISSIONS | LIBSSH2_SFTP_ATTR_ACMODTIME;
  attrs.permissions = item.mode;
  attrs.atime = static_cast<unsigned long>(item.atime);
  attrs.mtime = static_cast<unsigned long>(item.mtime);
  const int rc = libssh2_sftp_stat_ex(sftp_, temp_.c_str(), length(temp_), LIBSSH2_SFTP_SETSTAT, &attrs);
  if (would_block(rc)) return false;
  if (rc != 0) return fail_item(item.remote, "cannot set mode and times", rc);
  step_ = Step::rename;
  return true;
}

bool SftpUpload::rename_over_target() {
  const UploadItem& item = items_[index_];
  // posix-rename@openssh.com is rename(2): atomic, replaces the target. Plain
  // SFTP v3 rename (link + unlink in OpenSSH) refuses an existing target, and
  // libssh2's OVERWRITE/ATOMIC flags are only sent in protocol 5+.
  const int rc = libssh2_sftp_posix_rename_ex(sftp_, temp_.c_str(), length(temp_), item.remote.c_str(),
                                              length(item.remote));
  if (would_block(rc)) return false;
  if (rc != 0) {
    if (bare_failure(rc))
      return fail_item(item.remote, "cannot replace it (is it a directory? end DEST with / to copy into it)", 0);
    return fail_item(item.remote, "cannot move the temporary file over it", rc);
  }
  ++index_;
  step_ = Step::next;
  return true;
}

bool SftpUpload::remove_temp_and_fail() {
  if (!temp_.empty() && items_[index_].bytes) {
    const int rc = libssh2_sftp_unlink_ex(sftp_, temp_.c_str(), length(temp_));
    if (would_block(rc)) return false;
  }
  error_ = pending_error_;
  phase_ = Phase::failed;
  wait_ = util::Wait::none;
  return true;
}

}  // namespace tpush::ssh
