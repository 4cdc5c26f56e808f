// Named groups of hosts for `@group` in host lists, and a reader for ClusterShell's
// flat groups file (/etc/clustershell/groups, groups.d/local.cfg), so that a clush
// user's file works as it is:
//
//   # comment
//   rack1: node[01-16]
//   oss: example4 example5          (commas or blanks between hosts)
//   io: @oss,example6               (a group may name other groups)
//   all: node[01-32],login          (what wildcards like n*1 match against)
//
// Each line is `NAME: HOSTS`, NAME at the start of the line; HOSTS is a host list
// (host_list.h). `#` starts a comment anywhere. A name given on several lines
// means all of them together, as in ClusterShell. Names may not hold blanks or
// any of `:,@[]!&^*?#`. ClusterShell's YAML group files (groups.d/*.yaml) are not read.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tpush::inventory {

struct GroupDefinition {
  std::string expression;  // a host list; may reference other groups
  std::string where;       // for messages: "FILE:LINE", control characters escaped
};

// Where `@group` and `@source:group` references are looked up.
class GroupSource {
 public:
  virtual ~GroupSource() = default;
  // Group `name` of group source `source` ("" for the default source), or nullopt
  // when there is no such source or group. The group `all` lists every host and
  // is what `@*` and wildcards need.
  virtual std::optional<GroupDefinition> find(std::string_view source,
                                              std::string_view name) const = 0;
  // Where the groups come from, for messages: "groups file '/etc/tpush/groups'".
  virtual std::string origin() const = 0;
};

// The groups of one flat groups file, as the single source `source` (ClusterShell
// calls the source of this file "local"): `@rack1` and `@local:rack1` are the same.
class HostGroups final : public GroupSource {
 public:
  // No groups yet; add_text() and add() bring them.
  explicit HostGroups(std::string source = "local");
  // Parses a groups file's text; `file` names it in messages. Malformed lines are a
  // UsageError "FILE:LINE: ...".
  HostGroups(std::string_view text, std::string file, std::string source = "local");

  // Reads and parses `file`; an unreadable file is a UsageError naming it and the
  // system's reason.
  static HostGroups read(const std::filesystem::path& file, std::string source = "local");

  std::optional<GroupDefinition> find(std::string_view source,
                                      std::string_view name) const override;
  std::string origin() const override;

  // The groups of one more file's text (as the constructor reads it).
  void add_text(std::string_view text, const std::string& file);
  // One definition from elsewhere (tpush's config file); `where` ("FILE:LINE")
  // names it in messages. A name already defined gets these hosts too.
  void add(std::string_view name, std::string_view hosts, const std::string& where);
  // Says where add()'s definitions come from, for origin(): "config file 'F'".
  void add_origin(std::string origin) { origins_.push_back(std::move(origin)); }

  // The group names, in the order the file first gives them.
  const std::vector<std::string>& names() const { return names_; }

 private:
  std::string source_;
  std::vector<std::string> origins_;  // "groups file 'F'", for origin()
  std::map<std::string, GroupDefinition, std::less<>> groups_;
  std::vector<std::string> names_;
};

}  // namespace tpush::inventory
