#include "tpush/inventory/tpu_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tpush/util/file.h"

namespace tpush::inventory {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr int kFormat = 1;

const char* kind_dir(TpuCacheKind kind) { return kind == TpuCacheKind::tpu ? "tpu" : "qr"; }
const char* kind_name(TpuCacheKind kind) {
  return kind == TpuCacheKind::tpu ? "tpu" : "queued-resource";
}


}  // namespace

std::string utc_now_iso8601() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

fs::path TpuCache::path_for(TpuCacheKind kind, const TpuNodeRef& ref) const {
  return dir_ / kind_dir(kind) / ref.project / ref.zone / (ref.name + ".json");
}

std::optional<TpuCacheEntry> TpuCache::load(TpuCacheKind kind, const TpuNodeRef& ref,
                                            std::vector<std::string>& warnings) const {
  const fs::path path = path_for(kind, ref);
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;  // no entry (or unreadable: same as none)
  std::ostringstream text;
  text << in.rdbuf();

  auto corrupt = [&](const std::string& why) -> std::optional<TpuCacheEntry> {
    warnings.push_back("ignoring corrupt cache file " + path.string() + " (" + why +
                       "); asking gcloud instead");
    return std::nullopt;
  };
  json j = json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return corrupt("not valid JSON");
  auto str = [&](const char* key) -> std::optional<std::string> {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
  };
  auto format = j.find("tpush_cache");
  if (format == j.end() || !format->is_number_integer() || format->get<int>() != kFormat) {
    return corrupt("unknown format");
  }
  if (str("kind") != kind_name(kind) || str("project") != ref.project || str("zone") != ref.zone ||
      str("name") != ref.name) {
    return corrupt("it is for another resource");
  }
  auto describe = str("describe");
  auto fetched = str("fetched_at");
  if (!describe || describe->empty() || !fetched) return corrupt("fields missing");

  TpuCacheEntry entry;
  entry.describe_json = *describe;
  entry.fetched_at = *fetched;
  for (auto [field, into] : {std::pair{"guest_attributes", &entry.guest_attributes_json},
                             std::pair{"project_info", &entry.project_info_json},
                             std::pair{"project_info_error", &entry.project_info_error}}) {
    auto it = j.find(field);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_string()) return corrupt(std::string("bad ") + field);
    *into = it->get<std::string>();
  }
  return entry;
}

void TpuCache::store(TpuCacheKind kind, const TpuNodeRef& ref, const TpuCacheEntry& entry,
                     std::vector<std::string>& warnings) const {
  const fs::path path = path_for(kind, ref);
  auto fail = [&](const std::string& why) {
    warnings.push_back("cannot write cache file " + path.string() + ": " + why);
  };

  json j = {{"tpush_cache", kFormat},
            {"kind", kind_name(kind)},
            {"project", ref.project},
            {"zone", ref.zone},
            {"name", ref.name},
            {"fetched_at", entry.fetched_at},
            {"describe", entry.describe_json}};
  j["guest_attributes"] = entry.guest_attributes_json ? json(*entry.guest_attributes_json) : json(nullptr);
  j["project_info"] = entry.project_info_json ? json(*entry.project_info_json) : json(nullptr);
  if (entry.project_info_error) j["project_info_error"] = *entry.project_info_error;
  if (const std::string err = util::write_file_atomic(path, j.dump(2) + "\n"); !err.empty()) return fail(err);
  ::chmod(dir_.c_str(), 0700);
}

void TpuCache::remove(TpuCacheKind kind, const TpuNodeRef& ref) const {
  std::error_code ec;
  fs::remove(path_for(kind, ref), ec);
}

}  // namespace tpush::inventory
