// tpush rsync [rsync options] SRC DEST: the local rsync once per worker, under
// the fan-out cap, its remote side written ":path". rsync reaches the worker
// through `ssh -F <generated config>`, which carries tpush's user, port, keys
// and host-key policy; its output goes through the same prefixed lines and
// summary as a command's.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "tpush/commands/copy/copy.h"
#include "tpush/commands/plan/openssh_config.h"
#include "tpush/commands/plan/run_context.h"
#include "tpush/commands/plan/targets.h"
#include "tpush/fanout/rsync_job.h"
#include "tpush/util/child_process.h"
#include "tpush/util/environment.h"
#include "tpush/util/error.h"

namespace tpush::commands {

std::size_t rewrite_remote_args(std::vector<std::string>& args, const std::string& host) {
  std::size_t n = 0;
  for (auto& a : args)
    if (a.size() > 1 && a[0] == ':') a = host + a, ++n;
  return n;
}

namespace {

constexpr std::size_t kDefaultRsyncFanout = 32;  // each one is an rsync plus an ssh process

constexpr const char* kDescription =
    "run the local rsync once per worker, the worker side written :PATH, e.g. `tpush -t mytpu rsync -a "
    "--delete ./src/ :job/src/`, or `tpush -w 'node[1-4]' rsync -a :logs/ ./logs/` (pulls from every worker "
    "into the same place: use with care). rsync connects with `ssh -F <generated config>` using tpush's "
    "user, port, keys and host-key policy, so -e/--rsh may not be given. At most 32 workers run at once "
    "unless -f says otherwise. rsync must be installed here and on the workers.";

// rsync splits its -e value on whitespace and honours single quotes.
std::string rsh_quote(const std::string& s) {
  if (s.find_first_of(" \t'\"\\") == std::string::npos) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A private directory with the generated ssh config, removed at the end.
class SshConfig {
 public:
  explicit SshConfig(const RunContext& ctx) {
    std::string templ = util::env_value("TMPDIR").value_or("/tmp") + "/tpush-rsync-XXXXXX";
    if (!::mkdtemp(templ.data())) throw SetupError("cannot create a temporary directory: " + std::string(std::strerror(errno)));
    dir_ = templ;
    file_ = dir_ / "ssh_config";
    std::vector<OpenSshHost> hosts;
    for (std::size_t i = 0; i < ctx.workers().size(); ++i) {
      const auto& w = ctx.workers()[i];
      hosts.push_back({alias(i), &ctx.reach(i), w.pinned_host_key.value_or(""), w.host_key_aliases});
    }
    const std::string pinned = pinned_known_hosts_lines(hosts);
    const std::filesystem::path pinned_file = dir_ / "pinned_known_hosts";
    write(file_, openssh_config(hosts, pinned.empty() ? "" : pinned_file.string()));
    if (!pinned.empty()) write(pinned_file, pinned);
  }
  ~SshConfig() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  SshConfig(const SshConfig&) = delete;
  SshConfig& operator=(const SshConfig&) = delete;

  static std::string alias(std::size_t i) { return "tpush-w" + std::to_string(i); }
  const std::filesystem::path& file() const { return file_; }

 private:
  static void write(const std::filesystem::path& p, const std::string& text) {
    const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 || ::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
      const int err = errno;
      if (fd >= 0) ::close(fd);
      throw SetupError("cannot write " + p.string() + ": " + std::strerror(err));
    }
    ::close(fd);
  }
  std::filesystem::path dir_, file_;
};

}  // namespace

int rsync_main(Options& o, int signal_fd) {
  std::vector<std::string> args = o.rest;  // every word after `rsync` is rsync's
  if (args.empty() || args.front() == "--help" || args.front() == "-h") {
    print_subcommand_help("rsync", kDescription);
    return 0;
  }
  if (o.sudo)
    throw UsageError("tpush rsync does not run as root with --sudo: give rsync --rsync-path='sudo -n rsync' "
                     "(which needs sudo without a password on the workers)");
  std::size_t remote_args = 0;
  for (const auto& a : args) {
    if (a == "-e" || a.rfind("--rsh", 0) == 0 || (a.size() > 2 && a[0] == '-' && a[1] != '-' && a.find('e') != std::string::npos && a.back() == 'e'))
      throw UsageError("tpush rsync sets rsync's remote shell itself: drop '" + a + "'");
    if (a.size() > 1 && a[0] == ':') ++remote_args;
  }
  if (remote_args == 0)
    throw UsageError("tpush rsync: write the worker side as :PATH (e.g. tpush rsync -a ./src/ :job/src/)");

  const std::filesystem::path rsync = util::find_program("rsync");
  if (rsync.empty())
    throw SetupError("rsync is not installed on this machine (apt-get install rsync): tpush rsync runs it once per worker");
  const std::filesystem::path ssh = util::find_program("ssh");
  if (ssh.empty())
    throw SetupError("ssh is not installed on this machine (apt-get install openssh-client): rsync reaches the workers through it");

  Targets t = resolve_targets(o, signal_fd);
  if (!o.fanout) o.fanout = std::min(kDefaultRsyncFanout, t.workers.size());
  RunContext ctx(o, std::move(t.workers), signal_fd);
  const SshConfig config(ctx);
  const std::string rsh = rsh_quote(ssh.string()) + " -F " + rsh_quote(config.file().string());

  auto run = ctx.run(ctx.everyone(), [&](std::size_t i) -> std::unique_ptr<fanout::Job> {
    util::ChildSpec command;
    command.program = rsync;
    command.args = {"-e", rsh};
    std::vector<std::string> rest = args;
    rewrite_remote_args(rest, SshConfig::alias(i));
    command.args.insert(command.args.end(), rest.begin(), rest.end());
    return std::make_unique<fanout::RsyncJob>(i, std::move(command), ctx.deadlines(i), ctx.output());
  });
  return ctx.finish(run);
}

}  // namespace tpush::commands
