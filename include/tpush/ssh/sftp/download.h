// Fetching files (and with -r, trees) from one worker over SFTP, as a
// non-blocking state machine on a ready session:
//   init SFTP -> for each remote path: stat -> file: open, read into a local
//   "<target>.tpush-tmp-<random>", [mode and times with -p], rename over the
//   target | directory (-r): create it locally, list it, queue its entries
// Local writes go to this machine's disk (blocking, but short). On an error
// the local temporary file is removed; the target is never half-written.
#pragma once

#include <ctime>
#include <filesystem>
#include <string>
#include <vector>

#include "tpush/ssh/sftp/transfer.h"

namespace tpush::ssh {

struct DownloadRequest {
  std::string remote;                 // as given: "logs/train.log", "/var/log/x"
  std::filesystem::path local;        // the local target for it: LOCALDIR/<label>/<basename>
};

class SftpDownload final : public SftpTransfer {
 public:
  SftpDownload(LIBSSH2_SESSION* session, std::vector<DownloadRequest> requests, bool recursive,
               bool preserve);
  ~SftpDownload() override;
  void advance() override;

 private:
  enum class Kind { unknown, file, dir, link };
  struct Work {
    std::string remote;
    std::filesystem::path local;
    Kind kind = Kind::unknown;
    bool root = false;
    unsigned mode = 0644;
    std::time_t mtime = 0, atime = 0;
  };
  enum class Step { init, next, stat, opendir, readdir, closedir, open, read, close, shutdown,
                    cleanup_close };
  // One step of the machine (step() picks it by step_): each returns true when it
  // moved on, false when waiting on the network or finished.
  bool step();
  bool next_item();
  bool stat_item();        // a request's kind: file, directory (with -r), or neither
  bool open_dir();
  bool read_dir_entry();   // queues each file, directory and symlink found
  bool open_file();        // and its local temporary file
  bool read_some();
  bool close_file();       // then renames the local temporary file over the target
  bool local_fail(const std::string& what, int err);
  void finish_file();
  bool fail_item(const std::string& path, const std::string& what, int rc);
  void remove_temp();

  std::vector<Work> queue_;
  Work current_;
  bool recursive_, preserve_;
  Step step_ = Step::init;
  int local_fd_ = -1;
  std::filesystem::path temp_;
  std::string pending_error_;
  std::vector<char> buf_;
};

// Where `remote` from worker `label` lands under `local_dir`: local_dir/<label>/<basename>.
// A label's '/' becomes '_'; a remote path ending in '/' uses its last component.
std::filesystem::path download_target(const std::filesystem::path& local_dir, const std::string& label,
                                      const std::string& remote);

}  // namespace tpush::ssh
