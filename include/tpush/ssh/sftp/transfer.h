// What the SFTP state machines (upload for cp, download for get) have in
// common: the SFTP subsystem on a ready session, waiting, errors, progress.
#pragma once

#include <cstdint>
#include <string>

#include "tpush/util/wait.h"

typedef struct _LIBSSH2_SESSION LIBSSH2_SESSION;
typedef struct _LIBSSH2_SFTP LIBSSH2_SFTP;
typedef struct _LIBSSH2_SFTP_HANDLE LIBSSH2_SFTP_HANDLE;

namespace tpush::ssh {

class SftpTransfer {
 public:
  enum class Phase { running, done, failed };

  explicit SftpTransfer(LIBSSH2_SESSION* session) : session_(session) {}
  virtual ~SftpTransfer() = default;
  SftpTransfer(const SftpTransfer&) = delete;
  SftpTransfer& operator=(const SftpTransfer&) = delete;

  virtual void advance() = 0;
  Phase phase() const { return phase_; }
  util::Wait wait() const { return wait_; }
  const std::string& error() const { return error_; }
  bool server_hung_up() const { return hung_up_; }
  std::uint64_t bytes_done() const { return bytes_done_; }
  // True once the SFTP subsystem was open: before that, a failure asked the
  // server for nothing but a channel.
  bool began() const { return began_; }
  // Forgets every libssh2 object without touching the network (the session is
  // being abandoned; freeing it frees them).
  void release();
  // Asks the transfer to stop at the next safe point and clean up after itself
  // on the worker (the first Ctrl-C). False when it cannot, and must simply be
  // abandoned.
  virtual bool cancel() { return false; }

  // "<target>.tpush-tmp-<12 hex digits>": where a file is written before it
  // is renamed over its target (on the worker for cp, here for get).
  static std::string temp_name(const std::string& target);

  // SFTP status code as words ("permission denied", "no such file or directory").
  static std::string status_text(unsigned long code);

 protected:
  // A path's length as libssh2's SFTP calls take it.
  static unsigned int length(const std::string& path) { return static_cast<unsigned int>(path.size()); }
  // True (and the wait direction set) when rc is EAGAIN.
  bool would_block(int rc);
  // Closes handle_; false while that would block. `rc` (if given) gets the result.
  bool close_handle(int* rc = nullptr);
  // True when rc is an SFTP status without detail (SSH_FX_FAILURE): what
  // OpenSSH's server sends for errors it cannot name, such as a full disk.
  bool bare_failure(int rc) const;
  int last_errno() const;
  // Marks the transfer failed with "<path>: <what>" plus the SFTP or session
  // error behind rc.
  void fail(const std::string& path, const std::string& what, int rc);
  // Opens the SFTP subsystem; false while it would block or after a failure.
  bool init();
  // Closes the SFTP subsystem at the end; true when done.
  bool shutdown();

  LIBSSH2_SESSION* session_;
  LIBSSH2_SFTP* sftp_ = nullptr;
  LIBSSH2_SFTP_HANDLE* handle_ = nullptr;
  Phase phase_ = Phase::running;
  util::Wait wait_ = util::Wait::none;
  std::string error_;
  bool hung_up_ = false;
  bool began_ = false;
  std::uint64_t bytes_done_ = 0;
};

}  // namespace tpush::ssh
