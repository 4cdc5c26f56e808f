#include "tpush/inventory/host_list.h"

#include <cctype>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tpush/inventory/host_filter.h"
#include "tpush/inventory/hosts_file.h"
#include "tpush/util/error.h"
#include "tpush/util/pattern.h"

namespace tpush::inventory {
namespace {

namespace fs = std::filesystem;
using std::string_view;

// What a host list collects before it is finished: exclusions and filters wait
// until every item is in.
struct Scope {
  HostSet hosts;
  std::vector<HostSpec> excluded;
  std::vector<HostFilter> filters;

  std::vector<HostSpec> finish() && {
    auto list = exclude_hosts(std::move(hosts).take(), excluded);
    for (const auto& f : filters) {
      std::erase_if(list, [&](const HostSpec& h) { return f.matches(h.host) == f.drop; });
    }
    return list;
  }
};

// -x lists name what to leave out: their plain items exclude, their filters drop.
enum class Mode { include, exclude };

std::string operator_meaning(char op) {
  switch (op) {
    case '!': return "a!b: the hosts of a without those of b";
    case '&': return "a&b: the hosts in both";
    default: return "a^b: the hosts in exactly one of them";
  }
}

// Collects the hosts of items, expressions, files and groups, following ^FILE and
// @group references and refusing cycles.
class Expander {
 public:
  explicit Expander(const HostListOptions& options) : groups_(options.groups), no_groups_hint_(options.no_groups_hint) {}

  // One expression: each line is evaluated on its own and added to `scope`.
  void add_expression(string_view expr, Scope& scope, Mode mode, string_view source = {}) {
    while (!expr.empty()) {
      const auto nl = expr.find('\n');
      add_line(expr.substr(0, nl), scope, mode, source, {});
      expr.remove_prefix(nl == string_view::npos ? expr.size() : nl + 1);
    }
  }

  // A hosts file's text: like an expression, with errors prefixed by "SOURCE:LINE: ".
  // `#include FILE` names files relative to `base`.
  void add_text(string_view text, string_view source, Scope& scope, const fs::path& base = {}) {
    for_each_hosts_line(text, source, [&](string_view line) { add_line(line, scope, Mode::include, {}, base); });
  }

  // The hosts of a file, finished: its exclusions and filters apply to it alone.
  std::vector<HostSpec> file_hosts(const fs::path& file) {
    files_.enter(file);
    const std::string text = read_list_file(file, "hosts file");
    Scope scope;
    add_text(text, file.string(), scope, file.parent_path());
    files_.leave();
    return std::move(scope).finish();
  }

 private:
  // Where a line's left-to-right reading is.
  struct LineState {
    HostSet chain;            // the items combined so far
    char op = 0;              // an operator waiting for its right side
    std::size_t op_at = 0;
    bool after_item = false;  // the last thing read was an item (blanks may follow)
    std::string special;      // that item was an exclusion or filter: no operator may follow
  };

  // One line: items and operators, evaluated left to right. `source` is the group
  // source of a group's definition, `base` where `#include` looks.
  void add_line(string_view line, Scope& scope, Mode mode, string_view source, const fs::path& base) {
    if (is_include_line(line)) {
      include(line, scope, base);
      return;
    }
    line = without_comment(line);
    LineState st;
    std::size_t i = 0;
    while (true) {
      while (i < line.size() && is_list_blank(line[i])) ++i;
      if (i == line.size()) break;
      const char c = line[i];
      if (c == ',') {
        if (st.op) missing_right(line, st.op, st.op_at);
        st.after_item = false;
        st.special.clear();
        ++i;
      } else if (c == '!' || c == '&' || (c == '^' && st.after_item)) {
        take_operator(line, i, st);
        ++i;
      } else {
        i = take_item(line, i, st, scope, mode, source);
      }
    }
    if (st.op) missing_right(line, st.op, st.op_at);
    scope.hosts.add_all(std::move(st.chain));
  }

  // The operator at `i`: it must follow an item that may take part in it.
  static void take_operator(string_view line, std::size_t i, LineState& st) {
    const char c = line[i];
    if (st.op) {
      fail_host_list(line, "'" + std::string(1, c) + "' at " + column_text(i) + " follows '" + std::string(1, st.op) +
                     "' at " + column_text(st.op_at) + " (one operator between two items, as in " +
                     operator_meaning(c) + ")");
    }
    if (!st.after_item) {
      fail_host_list(line, "'" + std::string(1, c) + "' at " + column_text(i) + " has nothing on its left (write " +
                     operator_meaning(c) + ")");
    }
    if (!st.special.empty()) {
      fail_host_list(line, quote_for_message(st.special) + " cannot take part in '" + std::string(1, c) +
                     "' (exclusions and filters apply to the whole list; write " +
                     operator_meaning(c) + ", and " + escape_for_message(st.special) + " after a comma)");
    }
    st.op = c;
    st.op_at = i;
    st.after_item = false;
  }

  // The item starting at `i` (an exclusion when it starts with '-'): a filter,
  // an exclusion, or an operand of the chain. Returns where it ends.
  std::size_t take_item(string_view line, std::size_t i, LineState& st, Scope& scope, Mode mode, string_view source) {
    const std::size_t start = i;
    const bool exclusion = line[i] == '-';
    if (exclusion) {
      if (st.op) {
        fail_host_list(line, "'-' at " + column_text(i) + " after '" + std::string(1, st.op) +
                       "': a host name cannot start with '-' (write " + operator_meaning(st.op) +
                       "; a leading '-' excludes only at the start of an item)");
      }
      if (mode == Mode::exclude) {
        fail_host_list(line, "'-' at " + column_text(i) + " in a list that already excludes (drop the '-')");
      }
      ++i;
      if (i == line.size() || is_list_blank(line[i]) || line[i] == ',') {
        if (trim_blanks(line) == "-") {
          fail_host_list(line, "tpush does not read hosts from standard input, as pdsh -w - does (write "
                     "-H FILE)");
        }
        fail_host_list(line, "'-' at " + column_text(start) + " needs a host, @group, ^FILE or /REGEX/ right after it");
      }
    }
    const std::size_t end = item_end(line, i);
    const string_view token = line.substr(i, end - i);
    const string_view whole = line.substr(start, end - start);
    check_host_text(whole, {});  // a hosts file's lines were checked whole
    st.after_item = true;
    st.special.clear();

    if (token.front() == '/') {
      if (st.op) {
        fail_host_list(line, "the filter " + quote_for_message(token) + " cannot take part in '" + std::string(1, st.op) +
                       "' (filters apply to the whole list; write it after a comma)");
      }
      scope.filters.push_back(parse_host_filter(token, exclusion || mode == Mode::exclude));
      st.special = whole;
      return end;
    }
    if (token.front() == '#') {  // after an operator or a '-': a comment there would cut the list short
      fail_host_list(line, quote_for_message(token) + " at " + column_text(i) +
                               ": a host name cannot start with '#' (a '#' starts a comment after a blank or a "
                               "comma, and is part of a name inside one)");
    }
    HostSet operand = item(token, source);
    if (exclusion) {
      scope.excluded.insert(scope.excluded.end(), operand.hosts().begin(), operand.hosts().end());
      st.special = whole;
      return end;
    }
    if (st.op) {
      st.chain = combine_hosts(st.op, st.chain, operand);
      st.op = 0;
    } else {
      st.chain.add_all(std::move(operand));
    }
    return end;
  }

  // pdsh's `#include FILE` (in the first column): FILE's hosts.
  void include(string_view line, Scope& scope, const fs::path& base) {
    scope.hosts.add_all(file_hosts(include_target(line, base)));
  }

  [[noreturn]] static void missing_right(string_view line, char op, std::size_t at) {
    fail_host_list(line, "'" + std::string(1, op) + "' at " + column_text(at) + " has nothing on its right (write " +
                   operator_meaning(op) + ")");
  }

  // Where the item starting at `i` ends: ^FILE and /REGEX/ at the next comma or
  // blank; others also at an operator outside brackets.
  static std::size_t item_end(string_view line, std::size_t i) {
    const bool plain = line[i] != '^' && line[i] != '/';
    std::size_t depth = 0;
    for (std::size_t j = i; j < line.size(); ++j) {
      const char c = line[j];
      if (plain && c == '[') ++depth;
      if (plain && c == ']' && depth > 0) --depth;
      if (depth > 0) continue;
      if (is_list_blank(c) || c == ',') return j;
      if (plain && j > i && (c == '!' || c == '&' || c == '^')) return j;
    }
    return line.size();
  }

  // One item (or operand): ^FILE, @group, a wildcard, or [user@]host[:port].
  HostSet item(string_view token, string_view source) {
    HostSet out;
    if (token.front() == '^') {
      const string_view name = token.substr(1);
      if (name.empty()) fail_host_list(token, "'^' needs a file name right after it (write ^hosts.txt)");
      out.add_all(file_hosts(fs::path(std::string(name))));
    } else if (token.front() == '@') {
      group_item(token, source, out);
    } else {
      host_item(token, out);
    }
    return out;
  }

  void group_item(string_view token, string_view source, HostSet& out) {
    string_view ref = token.substr(1);
    if (ref.empty()) fail_host_list(token, "'@' needs a group name right after it (write @rack1)");
    if (ref.front() == '@') {
      fail_host_list(token, "'@@' lists the names of groups, which tpush does not expand (write @GROUP)");
    }
    std::string group_source(source);
    if (const auto colon = ref.find(':'); colon != string_view::npos) {
      group_source = ref.substr(0, colon);
      ref = ref.substr(colon + 1);
      if (group_source.empty() || ref.empty()) {
        fail_host_list(token, "write @SOURCE:GROUP, like @local:rack1, or @GROUP");
      }
    }
    if (ref == "*") {
      out.add_all(all_hosts(token, group_source));
      return;
    }
    const HostPattern names(ref, token, token.size() - ref.size());
    for (const auto& name : names.names()) out.add_all(group(token, group_source, name));
  }

  // The hosts of group `name`, evaluated once.
  const std::vector<HostSpec>& group(string_view token, const std::string& source, const std::string& name) {
    const std::string shown = "@" + (source.empty() ? "" : source + ":") + name;
    const std::string key = source + '\0' + name;
    if (const auto it = groups_done_.find(key); it != groups_done_.end()) return it->second;
    for (std::size_t i = 0; i < group_chain_.size(); ++i) {
      if (group_chain_[i].first != key) continue;
      std::string cycle;
      for (std::size_t j = i; j < group_chain_.size(); ++j) cycle += group_chain_[j].second + " -> ";
      throw UsageError("group " + quote_for_message(shown) + " includes itself (" + escape_for_message(cycle + shown) + ")");
    }
    if (groups_ == nullptr) {
      fail_host_list(token, "unknown group " + quote_for_message(shown) + " (no groups file is set up" + hint() +
                      "; a host name cannot start with '@')");
    }
    const auto definition = groups_->find(source, name);
    if (!definition) {
      fail_host_list(token, "unknown group " + quote_for_message(shown) + " (groups come from " + groups_->origin() + ")");
    }
    group_chain_.emplace_back(key, shown + " at " + definition->where);
    Scope scope;
    try {
      add_expression(definition->expression, scope, Mode::include, source);
    } catch (const UsageError& e) {
      throw UsageError(definition->where + ": " + e.what());
    }
    group_chain_.pop_back();
    return groups_done_[key] = std::move(scope).finish();
  }

  // The group `all`, which @* and wildcards need.
  const std::vector<HostSpec>& all_hosts(string_view token, const std::string& source) {
    if (groups_ == nullptr) {
      fail_host_list(token, "'*' and '?' select hosts of the group 'all' in a groups file, and no groups file is "
                  "set up" + hint() + " (a host name cannot hold '*' or '?')");
    }
    if (!groups_->find(source, "all")) {
      fail_host_list(token, "'*' and '?' select hosts of the group 'all', which " + groups_->origin() +
                      " does not define (add a line 'all: HOSTS')");
    }
    return group(token, source, "all");
  }

  void host_item(string_view item, HostSet& out) {
    if (item.size() > 4 && item.substr(0, 4) == "tpu:" && std::isalpha(static_cast<unsigned char>(item[4])))
      return tpu_item(item, out);
    const HostItem parsed = parse_host_item(item);
    if (parsed.address) {
      emit(item, parsed.user, *parsed.address, parsed.port, out);
    } else if (parsed.wildcard) {
      add_wildcard(item, parsed.user, parsed.pattern->names(), parsed.port, out);
    } else {
      check_room(item, parsed.pattern->count());  // before building the names
      out.reserve(parsed.pattern->count());
      for (auto& name : parsed.pattern->names()) emit(item, parsed.user, std::move(name), parsed.port, out);
    }
  }

  // `tpu:NAME` (ranges allowed: tpu:pod[1-2]): the workers of a TPU, resolved
  // later through gcloud. A port (`tpu:x:22`) or a user does not apply to them.
  void tpu_item(string_view item, HostSet& out) {
    const string_view names = item.substr(4);
    if (names.find_first_of(":@") != string_view::npos)
      fail_host_list(item, "a TPU item is tpu:NAME, without user@ or :port (set them with -l and -p)");
    const HostPattern pattern(names, item, 4);
    check_room(item, pattern.count());
    for (auto& name : pattern.names()) emit(item, "", "tpu:" + name, 0, out);
  }

  // The hosts of the group `all` whose names match a mask; a user or port in the
  // item replaces theirs.
  void add_wildcard(string_view item, const std::string& user, const std::vector<std::string>& masks,
                    uint16_t port, HostSet& out) {
    for (const auto& host : all_hosts(item, {})) {
      bool match = false;
      for (const auto& mask : masks) match = match || util::pattern_match(host.host, mask);
      if (!match) continue;
      HostSpec h = host;
      if (!user.empty()) h.user = user;
      if (port != 0) {
        h.port = port;
        h.text = host_text(h.host, port);
      }
      out.add(std::move(h));
    }
  }

  // Refuses to grow past max_expanded_hosts by `more` hosts.
  void check_room(string_view item, std::size_t more) const {
    if (more > max_expanded_hosts - emitted_) {
      fail_host_list(item, "the host list expands to more than " + std::to_string(max_expanded_hosts) +
                     " hosts (split it up)");
    }
  }

  void emit(string_view item, const std::string& user, std::string host, uint16_t port, HostSet& out) {
    check_room(item, 1);
    ++emitted_;
    std::string text = host_text(host, port);
    out.add(HostSpec{user, std::move(host), port, std::move(text)});
  }

  std::string hint() const { return no_groups_hint_.empty() ? "" : ": " + no_groups_hint_; }

  const GroupSource* groups_;
  std::string no_groups_hint_;
  std::size_t emitted_ = 0;
  HostsFileChain files_;                                         // hosts files being read
  std::vector<std::pair<std::string, std::string>> group_chain_;  // groups being expanded: key, shown
  std::map<std::string, std::vector<HostSpec>> groups_done_;
};

}  // namespace

std::vector<HostSpec> expand_host_list(string_view expr, const HostListOptions& options) {
  Expander expander(options);
  Scope scope;
  expander.add_expression(expr, scope, Mode::include);
  return std::move(scope).finish();
}

std::vector<HostSpec> parse_hosts_text(string_view text, string_view source, const HostListOptions& options) {
  Expander expander(options);
  Scope scope;
  expander.add_text(text, source, scope);
  return std::move(scope).finish();
}

std::vector<HostSpec> read_hosts_file(const fs::path& file, const HostListOptions& options) {
  Expander expander(options);
  return expander.file_hosts(file);
}

std::vector<HostSpec> select_hosts(const std::vector<std::string>& exprs, const std::vector<std::string>& files,
                                   const std::vector<std::string>& excludes, const HostListOptions& options) {
  Expander expander(options);
  Scope all;
  for (const auto& e : exprs) expander.add_expression(e, all, Mode::include);
  for (const auto& f : files) all.hosts.add_all(expander.file_hosts(f));
  for (const auto& x : excludes) {
    Scope left_out;  // its filters drop, and it has no exclusions of its own
    expander.add_expression(x, left_out, Mode::exclude);
    all.filters.insert(all.filters.end(), left_out.filters.begin(), left_out.filters.end());
    const auto& hosts = left_out.hosts.hosts();
    all.excluded.insert(all.excluded.end(), hosts.begin(), hosts.end());
  }
  return std::move(all).finish();
}

}  // namespace tpush::inventory
