#include "tpush/inventory/host_groups.h"

#include <string>
#include <string_view>
#include <utility>

#include "tpush/inventory/host_pattern.h"
#include "tpush/inventory/hosts_file.h"
#include "tpush/util/error.h"

namespace tpush::inventory {
namespace {

using std::string_view;

// Characters a group name cannot hold: host-list syntax around `@name`.
bool bad_name_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u <= 0x20 || u == 0x7f || string_view(":,@[]!&^*?#").find(c) != string_view::npos;
}

}  // namespace

HostGroups::HostGroups(std::string source) : source_(std::move(source)) {}

HostGroups::HostGroups(string_view text, std::string file, std::string source) : source_(std::move(source)) {
  add_text(text, file);
}

void HostGroups::add_text(string_view text, const std::string& file) {
  origins_.push_back("groups file " + quote_for_message(file));
  std::size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    const auto nl = text.find('\n');
    string_view line = text.substr(0, nl);
    text.remove_prefix(nl == string_view::npos ? text.size() : nl + 1);
    line = line.substr(0, line.find('#'));
    if (trim_blanks(line).empty()) continue;

    const std::string where = escape_for_message(file) + ":" + std::to_string(line_no);
    const auto colon = line.find(':');
    const string_view name = line.substr(0, colon);
    if (colon == string_view::npos || name.empty() || is_list_blank(name.front())) {
      throw UsageError(where + ": " + quote_for_message(trim_blanks(line)) +
                       " is not a group line (write NAME: HOSTS, like 'rack1: node[01-16]', "
                       "with NAME at the start of the line)");
    }
    add(name, trim_blanks(line.substr(colon + 1)), where);
  }
}

void HostGroups::add(string_view name, string_view hosts, const std::string& where) {
  if (name.empty()) throw UsageError(where + ": a group needs a name (like rack1)");
  for (char c : name) {
    if (bad_name_char(c)) {
      throw UsageError(where + ": group name " + quote_for_message(name) +
                       " cannot hold blanks or any of :,@[]!&^*?#");
    }
  }
  auto [it, inserted] = groups_.try_emplace(std::string(name), GroupDefinition{std::string(hosts), where});
  if (inserted) {
    names_.emplace_back(name);
  } else if (!hosts.empty()) {
    // ClusterShell reads every line of a name: they add up.
    auto& expression = it->second.expression;
    expression += expression.empty() ? std::string(hosts) : "," + std::string(hosts);
  }
}

HostGroups HostGroups::read(const std::filesystem::path& file, std::string source) {
  return HostGroups(read_list_file(file, "groups file"), file.string(), std::move(source));
}

std::optional<GroupDefinition> HostGroups::find(string_view source, string_view name) const {
  if (!source.empty() && source != source_) return std::nullopt;
  const auto it = groups_.find(name);
  if (it == groups_.end()) return std::nullopt;
  return it->second;
}

std::string HostGroups::origin() const {
  std::string out;
  for (std::size_t i = 0; i < origins_.size(); ++i)
    out += (i == 0 ? "" : i + 1 == origins_.size() ? " and " : ", ") + origins_[i];
  return (out.empty() ? "no file" : out) + " (source " + quote_for_message(source_) + ")";
}

}  // namespace tpush::inventory
