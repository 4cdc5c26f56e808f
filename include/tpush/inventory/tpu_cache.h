// The TPU resolution cache: gcloud's describe output kept per
// project/zone/name under $XDG_CACHE_HOME/tpush/ (or ~/.cache/tpush/), so a
// second run starts connecting without running gcloud.
//
//   DIR/tpu/PROJECT/ZONE/NAME.json   a TPU VM node
//   DIR/qr/PROJECT/ZONE/NAME.json    a queued resource
//
// An entry lives until --refresh (or a cached address that cannot be reached)
// describes the TPU again; there is no expiry by age. Writes are atomic
// (temporary file, fsync, rename). A file that cannot be read back as a cache
// entry for exactly that resource is reported as a warning and ignored, never
// trusted.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tpush/inventory/tpu_describe.h"

namespace tpush::inventory {

enum class TpuCacheKind { tpu, queued_resource };

struct TpuCacheEntry {
  std::string describe_json;                        // gcloud's output, verbatim
  std::optional<std::string> guest_attributes_json; // get-guest-attributes output, verbatim
  std::string fetched_at;                           // ISO 8601 UTC, e.g. 2026-11-22T19:04:05Z
  std::optional<std::string> project_info_json = {};  // project-info describe output, verbatim (OS Login)
  // Instead of that output: why the API refused it (gcloud's one line, e.g. no
  // compute.projects.get permission), kept so that later runs do not ask again.
  std::optional<std::string> project_info_error = {};
};

class TpuCache {
 public:
  explicit TpuCache(std::filesystem::path dir) : dir_(std::move(dir)) {}

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path path_for(TpuCacheKind kind, const TpuNodeRef& ref) const;

  // nullopt when there is no entry; a corrupt one adds a warning and is nullopt.
  std::optional<TpuCacheEntry> load(TpuCacheKind kind, const TpuNodeRef& ref,
                                    std::vector<std::string>& warnings) const;

  // Atomic replace. Failing to write is a warning, never an error.
  void store(TpuCacheKind kind, const TpuNodeRef& ref, const TpuCacheEntry& entry,
             std::vector<std::string>& warnings) const;

  // Removes the entry if present (e.g. a cached node that is no longer usable).
  void remove(TpuCacheKind kind, const TpuNodeRef& ref) const;

 private:
  std::filesystem::path dir_;
};

// The current time as ISO 8601 UTC ("2026-11-22T19:04:05Z").
std::string utc_now_iso8601();

}  // namespace tpush::inventory
