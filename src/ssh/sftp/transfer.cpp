#include "tpush/ssh/sftp/transfer.h"

#include <libssh2.h>
#include <libssh2_sftp.h>

#include <cstdio>
#include <random>
#include <vector>

#include "tpush/ssh/hangup.h"
#include "tpush/ssh/last_error.h"
#include "tpush/ssh/session_wait.h"

namespace tpush::ssh {

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
  wait_ = blocked_direction(session_);
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
    detail = last_error(session_);
    if (detail.empty()) detail = "libssh2 error " + std::to_string(rc);
  }
  hung_up_ = hung_up_ || is_hangup(rc);
  error_ = (path.empty() ? "" : path + ": ") + what + (detail.empty() ? "" : ": " + detail);
  phase_ = Phase::failed;
  wait_ = util::Wait::none;
}

bool SftpTransfer::init() {
  sftp_ = libssh2_sftp_init(session_);
  if (sftp_) return began_ = true;
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

std::string SftpTransfer::temp_name(const std::string& target) {
  static std::mt19937_64 rng{std::random_device{}()};
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "%012llx",
                static_cast<unsigned long long>(rng() & 0xffffffffffffULL));
  return target + ".tpush-tmp-" + suffix;
}

}  // namespace tpush::ssh
