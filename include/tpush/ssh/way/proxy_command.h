// ProxyCommand: a local program per worker whose stdin and stdout carry the
// worker's SSH stream (`ssh -W %h:%p bastion`, `nc`, `gcloud compute
// start-iap-tunnel ... --listen-on-stdin`). Its stdin/stdout are one end of a
// socketpair, the session speaks SSH on the other, inside the event loop.
// Its stderr is kept (a memfd) for the failure reason and -v. When the worker
// ends it gets TERM, then KILL from the reaper, and is reaped.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tpush/ssh/way/transport.h"
#include "tpush/util/child_process.h"

namespace tpush::util {
class ChildReaper;
}

namespace tpush::ssh {

struct ProxyCommand {
  // A command line as ssh_config writes it, its %-tokens already expanded. One
  // without shell syntax (quotes, $, pipes, redirections, ...) is split into
  // words and run directly; anything else runs as `$SHELL -c 'exec LINE'`,
  // as OpenSSH does.
  static ProxyCommand from_line(const std::string& line);
  // A program and its arguments, run directly (IAP tunnels: gcloud's argv).
  static ProxyCommand from_argv(std::vector<std::string> argv, std::string shown);

  std::vector<std::string> argv;
  std::string shown;  // for messages: the line, or the argv joined
};

// What a proxy's stderr says, as one printable line for a reason: its last
// `ERROR:` line (gcloud's start-iap-tunnel writes one, then a Python traceback,
// and exits 0), else its last non-empty line.
std::string proxy_stderr_summary(std::string_view text);

class ProxyCommandTransport final : public Transport {
 public:
  // `reaper` (may be null: then close() kills at once) takes the child when the worker ends.
  ProxyCommandTransport(ProxyCommand command, util::ChildReaper* reaper);
  ~ProxyCommandTransport() override;

  int open() override;
  bool open_on(int fd) override;
  std::string failure() const override;
  std::string notes() const override;
  std::string unanswered() const override;
  void close() override;
  void outlive_run(util::ChildReaper* reaper) override { reaper_ = reaper; }

 private:
  std::string stderr_tail() const;

  ProxyCommand command_;
  util::ChildReaper* reaper_;
  mutable util::Child child_;  // failure() reaps it when it has exited
  int stderr_fd_ = -1;  // a memfd the child writes its stderr to
  std::string start_error_;
};

}  // namespace tpush::ssh
