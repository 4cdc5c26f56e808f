#include "tpush/util/environment.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>

namespace tpush::util {

std::optional<std::string> env_value(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

std::filesystem::path home_dir() {
  if (auto h = env_value("HOME")) return *h;
  if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_dir) return pw->pw_dir;
  return "/";
}

std::string user_name() {
  if (auto u = env_value("USER")) return *u;
  if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_name) return pw->pw_name;
  return "root";
}

std::filesystem::path xdg_dir(const char* var, const char* fallback) {
  if (auto v = env_value(var); v && std::filesystem::path(*v).is_absolute()) return std::filesystem::path(*v) / "tpush";
  return home_dir() / fallback / "tpush";
}

}  // namespace tpush::util
