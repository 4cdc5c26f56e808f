// tpush cp [-r] [-p] SRC... DEST: every local file is read once and its bytes
// shared by every worker's SFTP upload.
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>

#include "tpush/commands/copy/copy.h"
#include "tpush/commands/plan/persist_run.h"
#include "tpush/commands/plan/run_context.h"
#include "tpush/commands/plan/targets.h"
#include "tpush/ssh/sftp/upload.h"
#include "tpush/util/error.h"

namespace tpush::commands {
namespace fs = std::filesystem;

std::string sftp_path(const std::string& remote) {
  if (remote == "~" || remote == "~/") return remote.size() == 1 ? "." : "./";
  if (remote.rfind("~/", 0) == 0) {
    std::string rest = remote.substr(2);
    while (!rest.empty() && rest.front() == '/') rest.erase(rest.begin());
    return rest.empty() ? "./" : rest;
  }
  return remote;
}

bool copies_into(const std::string& dest, std::size_t source_count) {
  return source_count > 1 || (!dest.empty() && dest.back() == '/');
}

namespace {

std::string local_name(const std::string& source) {
  fs::path p = fs::path(source).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();  // "dir/" -> "dir"
  std::string name = p.filename().string();
  if (name.empty() || name == "." || name == "..") {
    std::error_code ec;
    const fs::path abs = fs::weakly_canonical(fs::absolute(source), ec);
    name = abs.filename().string();
  }
  return name.empty() ? "root" : name;
}

}  // namespace

std::string upload_root(const std::string& source, const std::string& dest, bool into) {
  const std::string d = sftp_path(dest);
  if (!into) {
    std::string t = d;
    while (t.size() > 1 && t.back() == '/') t.pop_back();
    return t;
  }
  if (d.empty()) return local_name(source);
  return d + (d.back() == '/' ? "" : "/") + local_name(source);
}

std::vector<PlannedCopy> plan_upload(const std::vector<std::string>& sources, const std::string& dest,
                                     bool recursive) {
  const bool into = copies_into(dest, sources.size());
  std::vector<PlannedCopy> out;
  for (const auto& src : sources) {
    std::error_code ec;
    const auto st = fs::status(src, ec);
    if (ec || !fs::exists(st)) throw UsageError("cannot copy " + src + ": no such file or directory");
    const std::string root = upload_root(src, dest, into);
    if (fs::is_regular_file(st)) {
      out.push_back({src, root, false});
      continue;
    }
    if (!fs::is_directory(st)) throw UsageError("cannot copy " + src + ": not a regular file or directory");
    if (!recursive) throw UsageError("cannot copy " + src + ": is a directory (use -r)");
    out.push_back({src, root, true});
    // Pre-order walk: a directory always comes before what it holds.
    std::vector<std::pair<fs::path, std::string>> stack{{fs::path(src), root}};
    while (!stack.empty()) {
      auto [dir, remote_dir] = stack.back();
      stack.pop_back();
      std::vector<fs::directory_entry> entries;
      for (const auto& e : fs::directory_iterator(dir, ec)) entries.push_back(e);
      if (ec) throw UsageError("cannot list " + dir.string() + ": " + ec.message());
      std::sort(entries.begin(), entries.end(),
                [](const auto& a, const auto& b) { return a.path().filename() < b.path().filename(); });
      std::vector<std::pair<fs::path, std::string>> subdirs;
      for (const auto& e : entries) {
        const std::string remote = remote_dir + "/" + e.path().filename().string();
        std::error_code sec;
        if (e.is_symlink(sec) && e.is_directory(sec)) {
          spdlog::warn("skipping {}: a symbolic link to a directory", e.path().string());
          continue;
        }
        if (e.is_directory(sec)) {
          out.push_back({e.path(), remote, true});
          subdirs.emplace_back(e.path(), remote);
        } else if (e.is_regular_file(sec)) {
          out.push_back({e.path(), remote, false});
        } else {
          spdlog::warn("skipping {}: not a regular file or directory", e.path().string());
        }
      }
      // Reverse so the stack visits them in name order (output order is cosmetic).
      for (auto it = subdirs.rbegin(); it != subdirs.rend(); ++it) stack.push_back(*it);
    }
  }
  return out;
}

namespace {

std::vector<ssh::UploadItem> load_items(const std::vector<PlannedCopy>& plan, bool preserve,
                                        std::uint64_t& total) {
  std::vector<ssh::UploadItem> items;
  total = 0;
  for (const auto& p : plan) {
    struct stat st {};
    if (::stat(p.local.c_str(), &st) != 0) throw SetupError("cannot read " + p.local.string());
    ssh::UploadItem item;
    item.remote = p.remote;
    item.preserve = preserve;
    item.mtime = st.st_mtime;
    item.atime = st.st_atime;
    if (p.directory) {
      item.mode = preserve ? (st.st_mode & 07777) : 0755;
    } else {
      // Without -p: 0644, or 0755 for an executable (scripts stay runnable);
      // the worker's umask applies as for any new file.
      item.mode = preserve ? (st.st_mode & 07777) : ((st.st_mode & 0111) ? 0755 : 0644);
      item.bytes = util::SharedBytes::map_file(p.local.string());  // read once, for everyone
      total += item.bytes->size();
    }
    items.push_back(std::move(item));
  }
  return items;
}

}  // namespace

int cp_main(Options& o, int signal_fd) {
  bool recursive = false, preserve = false;
  std::optional<bool> relay;  // --relay / --no-relay; else relay_by_default
  SubcommandSpec spec;
  spec.without_sudo = "files are written as the login user, over SFTP"
                     " (copy them where that user may write, then move them with tpush --sudo 'mv ...')";
  spec.description =
      "copy local files to every worker over SFTP. Each file is written to a temporary name beside its "
      "target and renamed when complete. DEST ending in '/' (or several sources) means \"into\".";
  spec.add_own = [&](CLI::App& app) {
    add_copy_flags(app, recursive, preserve);
    app.add_flag_callback("--relay", [&] { relay = true; },
                          "Send the bytes over this machine's link once: the first worker passes them on to the "
                          "next, and so on, over the workers' own ssh (the default for 3 or more workers of one TPU "
                          "slice and 4 MiB or more; see RELAYED COPIES in tpush(1))");
    app.add_flag_callback("--no-relay", [&] { relay = false; }, "Send every worker its own copy");
  };
  auto args = parse_subcommand(o, spec);
  if (!args) return 0;
  if (auto code = hand_to_master(o, signal_fd)) return *code;
  if (args->size() < 2) throw UsageError("tpush cp needs at least one source and a destination (usage: " + usage_of("cp") + ")");
  const std::string dest = args->back();
  args->pop_back();

  std::uint64_t total = 0;
  auto items = std::make_shared<const std::vector<ssh::UploadItem>>(
      load_items(plan_upload(*args, dest, recursive), preserve, total));
  Targets targets = resolve_targets(o, signal_fd);
  // What one worker may have in flight (libssh2 copies it into packets). More
  // is slower, not faster: OpenSSH's sftp-server compacts its input buffer by
  // moving what is queued, so 16 workers at 4 MiB each cost sshd 4x the CPU of
  // 512 KiB (bench/, 100 MiB pushes). 512 KiB fills a 1 Gbit/s link at 4 ms RTT.
  const std::size_t workers = targets.workers.size();
  const std::size_t running = std::max<std::size_t>(1, std::min(workers, o.fanout ? o.fanout : workers));
  const std::size_t window = std::clamp<std::size_t>((256u << 20) / running, 256u << 10, 512u << 10);
  if (relay.value_or(o.relay.value_or(true) && relay_by_default(o, targets, total)))
    return run_relayed_copy(o, signal_fd, std::move(targets), items, preserve, window);

  return run_transfers(o, signal_fd, std::move(targets), total, [&](const RunContext&, std::size_t) {
    return [items, window](ssh::Session& s) { return std::make_unique<ssh::SftpUpload>(s.session(), items, window); };
  });
}

}  // namespace tpush::commands
