#include "tpush/persist/place.h"

#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "tpush/util/environment.h"

namespace tpush::persist {
namespace {

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string binary_identity() {
  struct stat st {};
  if (::stat("/proc/self/exe", &st) != 0) return "?";
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino) + ":" + std::to_string(st.st_mtim.tv_sec) +
         "." + std::to_string(st.st_mtim.tv_nsec);
}

// Makes `dir` (0700) if missing; empty when it is fit to hold the sockets.
std::string ensure_private_dir(const std::filesystem::path& dir) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
    return "cannot create " + dir.string() + ": " + std::strerror(errno);
  struct stat st {};
  if (::lstat(dir.c_str(), &st) != 0) return "cannot check " + dir.string() + ": " + std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) return dir.string() + " is not a directory (remove it)";
  if (st.st_uid != ::getuid()) return dir.string() + " belongs to uid " + std::to_string(st.st_uid) + ", not to you";
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%03o", static_cast<unsigned>(st.st_mode & 0777));
    return dir.string() + " is open to others (mode " + mode + "; chmod 700 it)";
  }
  return {};
}

// The socket and lock called `name` in `dir`.
Place named(const std::filesystem::path& dir, const std::string& name) {
  Place p;
  p.socket = dir / (name + ".sock");
  p.lock = dir / (name + ".lock");
  if (p.socket.string().size() >= sizeof(sockaddr_un::sun_path))
    p.problem = "the socket path " + p.socket.string() + " is too long for a Unix socket (set XDG_RUNTIME_DIR shorter)";
  return p;
}

}  // namespace

Place place_for(const std::string& worker_set) {
  std::filesystem::path dir;
  // XDG_RUNTIME_DIR when it is a directory of ours (after su or sudo it may
  // still name the other user's), else /tmp/tpush-UID.
  const auto runtime = util::env_value("XDG_RUNTIME_DIR");
  struct stat st {};
  if (runtime && runtime->front() == '/' && ::stat(runtime->c_str(), &st) == 0 && S_ISDIR(st.st_mode) &&
      st.st_uid == ::getuid())
    dir = std::filesystem::path(*runtime) / "tpush";
  else
    dir = "/tmp/tpush-" + std::to_string(::getuid());
  if (auto problem = ensure_private_dir(dir); !problem.empty()) {
    Place p;
    p.problem = std::move(problem);
    return p;
  }
  char key[17];
  std::snprintf(key, sizeof key, "%016" PRIx64, fnv1a(worker_set + "\n" + binary_identity()));
  return named(dir, key);
}

Place Place::slot(int k) const {
  if (k == 0 || !problem.empty()) return *this;
  return named(socket.parent_path(), socket.stem().string() + "-" + std::to_string(k + 1));
}

}  // namespace tpush::persist
