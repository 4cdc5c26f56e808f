// Pushing files to one worker over SFTP, as a non-blocking state machine on a
// ready session (the same session and event loop as commands):
//   init SFTP -> for each item: [mkdir -p] -> open <target>.tpush-tmp-<random>
//   -> write from this worker's own offset -> close -> [setstat with -p]
//   -> rename over the target (posix-rename@openssh.com: atomic overwrite)
// Every step returns on EAGAIN and records the direction it waits on. On an
// error, or when cancelled, the temporary file is removed and the worker fails
// with "<path>: <what went wrong>"; the target is never half-written.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <ctime>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "tpush/ssh/wait.h"

typedef struct _LIBSSH2_SESSION LIBSSH2_SESSION;
typedef struct _LIBSSH2_SFTP LIBSSH2_SFTP;
typedef struct _LIBSSH2_SFTP_HANDLE LIBSSH2_SFTP_HANDLE;

namespace tpush::ssh {

// A local file's bytes, read once (mmap) and shared by every worker's upload.
class SharedBytes {
 public:
  // Maps `path` read-only; throws SetupError when it cannot be read.
  static std::shared_ptr<const SharedBytes> map_file(const std::string& path);
  // Small files are read into memory instead (mappings are a limited resource).
  static std::shared_ptr<const SharedBytes> from_string(std::string bytes);
  ~SharedBytes();
  SharedBytes(const SharedBytes&) = delete;
  SharedBytes& operator=(const SharedBytes&) = delete;

  const char* data() const { return data_; }
  std::uint64_t size() const { return size_; }

 private:
  SharedBytes() = default;
  const char* data_ = nullptr;
  std::uint64_t size_ = 0;
  bool mapped_ = false;
  std::string owned_;
};

// One thing to create on the worker: a directory, or a file with its bytes.
struct UploadItem {
  std::string remote;                             // target path ("dir/file", "/abs/x")
  std::shared_ptr<const SharedBytes> bytes;       // null: a directory
  unsigned mode = 0644;                           // permission bits applied
  bool preserve = false;                          // -p: set mode and mtime exactly
  std::time_t mtime = 0, atime = 0;
};

// What SFTP state machines have in common: the SFTP channel, waiting, errors.
class SftpTransfer {
 public:
  enum class Phase { running, done, failed };

  explicit SftpTransfer(LIBSSH2_SESSION* session) : session_(session) {}
  virtual ~SftpTransfer() = default;
  SftpTransfer(const SftpTransfer&) = delete;
  SftpTransfer& operator=(const SftpTransfer&) = delete;

  virtual void advance() = 0;
  Phase phase() const { return phase_; }
  Wait wait() const { return wait_; }
  const std::string& error() const { return error_; }
  bool server_hung_up() const { return hung_up_; }
  std::uint64_t bytes_done() const { return bytes_done_; }
  // Forgets every libssh2 object without touching the network (the session is
  // being abandoned; freeing it frees them).
  void release();
  // Asks the transfer to stop at the next safe point and clean up after itself
  // on the worker (the first Ctrl-C). False when it cannot, and must simply be
  // abandoned.
  virtual bool cancel() { return false; }

  // SFTP status code as words ("permission denied", "no such file or directory").
  static std::string status_text(unsigned long code);

 protected:
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
  Wait wait_ = Wait::none;
  std::string error_;
  bool hung_up_ = false;
  std::uint64_t bytes_done_ = 0;
};

class SftpUpload final : public SftpTransfer {
 public:
  // `window`: bytes this worker may have in flight (libssh2 copies that much).
  // `items` is shared by every worker's upload (parents before children).
  SftpUpload(LIBSSH2_SESSION* session, std::shared_ptr<const std::vector<UploadItem>> items,
             std::size_t window);
  void advance() override;
  // Stops after the write in flight, removes the temporary file, then fails
  // with "<target>: interrupted". A file already complete is still renamed.
  bool cancel() override;

  // "<target>.tpush-tmp-<12 hex digits>".
  static std::string temp_name(const std::string& target);

 private:
  enum class Step {
    init, next, ensure_dir, ensure_dir_stat, open, write, close, setstat, rename,
    cleanup_close, cleanup_unlink, shutdown
  };
  void step();
  void fail_item(const std::string& path, const std::string& what, int rc);
  void start_ensure(const std::string& dir);

  std::shared_ptr<const std::vector<UploadItem>> shared_items_;
  const std::vector<UploadItem>& items_;
  std::size_t window_;
  std::size_t index_ = 0;
  Step step_ = Step::init;
  std::string temp_;
  std::uint64_t offset_ = 0;     // bytes of the current file acknowledged
  bool reopen_after_dirs_ = false;
  std::vector<std::string> dir_stack_;  // mkdir -p: deepest missing directory on top
  std::set<std::string> dirs_made_;
  int ensure_rc_ = 0;
  std::string pending_error_;    // set while cleaning up after an error
  std::string pending_path_;
  bool pending_hung_up_ = false;
  bool cancelled_ = false;
};

// Parent directory of a remote path ("" for a bare name, "/" for "/x").
std::string remote_parent(const std::string& path);

}  // namespace tpush::ssh
