#include "tpush/inventory/worker_selection.h"

#include <charconv>
#include <set>
#include <string_view>

#include "tpush/util/error.h"
#include "tpush/util/string.h"

namespace tpush::inventory {
namespace {

constexpr int kMaxWorkerIndex = 100000;  // far above any TPU slice

[[noreturn]] void bad(const std::string& text, const std::string& why) {
  throw UsageError("--worker " + text + ": " + why +
                   " (use all, an index like 0, a list like 1,4 or a range like 1-3)");
}

int parse_index(std::string_view part, const std::string& text) {
  int value = -1;
  auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
  if (part.empty() || ec != std::errc{} || end != part.data() + part.size() || value < 0 ||
      value > kMaxWorkerIndex) {
    bad(text, "'" + std::string(part) + "' is not a worker index");
  }
  return value;
}

}  // namespace

WorkerSelection WorkerSelection::parse(const std::string& raw) {
  WorkerSelection sel;
  std::string text = util::trimmed(raw);
  sel.text_ = text;
  if (util::iequals(text, "all")) return sel;

  std::set<int> picked;
  std::string_view rest = text;
  while (true) {
    auto comma = rest.find(',');
    std::string part = util::trimmed(rest.substr(0, comma));
    if (part.empty()) {
      if (comma == std::string_view::npos && !picked.empty()) break;  // trailing comma
      bad(text, "empty element");
    }
    if (auto dash = part.find('-'); dash != std::string::npos) {
      std::string_view p = part;
      int lo = parse_index(util::trimmed(p.substr(0, dash)), text);
      int hi = parse_index(util::trimmed(p.substr(dash + 1)), text);
      if (lo > hi) bad(text, "range '" + part + "' runs backwards");
      for (int i = lo; i <= hi; ++i) picked.insert(i);
    } else {
      picked.insert(parse_index(part, text));
    }
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  if (picked.empty()) bad(text, "no worker selected");
  sel.all_ = false;
  sel.indexes_.assign(picked.begin(), picked.end());
  return sel;
}

std::vector<int> WorkerSelection::resolve(int worker_count, const std::string& tpu_name) const {
  std::vector<int> out;
  if (all_) {
    for (int i = 0; i < worker_count; ++i) out.push_back(i);
    return out;
  }
  int highest = indexes_.back();
  if (highest >= worker_count) {
    std::string range = worker_count == 1 ? "only worker 0" : "0-" + std::to_string(worker_count - 1);
    throw UsageError("--worker " + text_ + ": " + tpu_name + " has " + std::to_string(worker_count) +
                     (worker_count == 1 ? " worker" : " workers") + ", worker " +
                     std::to_string(highest) + " does not exist (valid: " + range + ")");
  }
  return indexes_;
}

}  // namespace tpush::inventory
