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

#include "tpush/ssh/sftp/transfer.h"
#include "tpush/util/shared_bytes.h"

namespace tpush::ssh {

// One thing to create on the worker: a directory, or a file with its bytes.
struct UploadItem {
  std::string remote;                             // target path ("dir/file", "/abs/x")
  std::shared_ptr<const util::SharedBytes> bytes;       // null: a directory
  unsigned mode = 0644;                           // permission bits applied
  bool preserve = false;                          // -p: set mode and mtime exactly
  std::time_t mtime = 0, atime = 0;
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

 private:
  enum class Step {
    init, next, ensure_dir, ensure_dir_stat, open, write, close, setstat, rename,
    cleanup_close, cleanup_unlink, shutdown
  };
  // One step of the machine (step() picks it by step_): each returns true when it
  // moved on, false when waiting on the network or finished.
  bool step();
  bool next_item();
  bool make_next_dir();        // mkdir -p, deepest missing directory first
  bool check_existing_dir();   // mkdir failed: is it there already?
  bool open_temp();
  bool write_some();
  bool close_temp();
  bool set_mode_and_times();   // -p
  bool rename_over_target();
  bool remove_temp_and_fail(); // after an error: the target is left as it was
  bool fail_item(const std::string& path, const std::string& what, int rc);
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
