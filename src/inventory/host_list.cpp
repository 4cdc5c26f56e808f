#include "tpush/inventory/host_list.h"

#include <regex.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tpush/util/error.h"
#include "tpush/util/pattern.h"
#include "tpush/util/string.h"

namespace tpush::inventory {
namespace {

namespace fs = std::filesystem;
using std::string_view;

// Matches hosts against entries: the same host name, and the entry's user and port
// where it names them. `entries` must outlive the matcher.
class Matcher {
 public:
  explicit Matcher(const std::vector<HostSpec>& entries) {
    by_host_.reserve(entries.size());
    for (const auto& e : entries) by_host_.emplace(e.host, &e);
  }
  bool matches(const HostSpec& host) const {
    const auto [first, last] = by_host_.equal_range(host.host);
    for (auto it = first; it != last; ++it) {
      const HostSpec& e = *it->second;
      if ((e.user.empty() || e.user == host.user) && (e.port == 0 || e.port == host.port)) return true;
    }
    return false;
  }

 private:
  std::unordered_multimap<string_view, const HostSpec*> by_host_;
};

// Hosts in order, each (user, host, port) once. The index is an open-addressing
// table of positions in the list: no key strings, one probe per host (a range of
// 100,000 names goes through a few of these sets on its way to the workers).
class HostSet {
 public:
  // Adds `host` unless it is in already; says whether it was added.
  bool add(HostSpec host) {
    if ((hosts_.size() + 1) * 2 > slots_.size()) rehash(std::max<std::size_t>(16, slots_.size() * 2));
    const std::size_t slot = find_slot(host);
    if (slots_[slot] != kEmpty) return false;
    slots_[slot] = static_cast<uint32_t>(hosts_.size());
    hosts_.push_back(std::move(host));
    return true;
  }
  void add_all(const std::vector<HostSpec>& hosts) {
    reserve(hosts_.size() + hosts.size());
    for (const auto& h : hosts) add(h);
  }
  // `other`'s hosts after these; taken whole when this set is empty.
  void add_all(HostSet&& other) {
    if (hosts_.empty()) {
      *this = std::move(other);
      return;
    }
    reserve(hosts_.size() + other.hosts_.size());
    for (auto& h : other.hosts_) add(std::move(h));
  }
  // Room for `n` hosts, growing geometrically (sets grow by many add_all calls).
  void reserve(std::size_t n) {
    if (n > hosts_.capacity()) hosts_.reserve(std::max(n, hosts_.capacity() * 2));
    std::size_t want = 16;
    while (want < n * 2) want *= 2;
    if (want > slots_.size()) rehash(want);
  }
  const std::vector<HostSpec>& hosts() const { return hosts_; }
  std::vector<HostSpec> take() && { return std::move(hosts_); }

 private:
  static constexpr uint32_t kEmpty = UINT32_MAX;  // max_expanded_hosts is far below

  static std::size_t hash(const HostSpec& h) {
    std::size_t seed = std::hash<string_view>{}(h.host);
    seed ^= std::hash<string_view>{}(h.user) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
    seed ^= h.port + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
    return seed;
  }
  // The slot holding a host equal to `host`, else the empty slot where it goes.
  std::size_t find_slot(const HostSpec& host) const {
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = hash(host) & mask;; i = (i + 1) & mask) {
      const uint32_t at = slots_[i];
      if (at == kEmpty) return i;
      const HostSpec& h = hosts_[at];
      if (h.port == host.port && h.host == host.host && h.user == host.user) return i;
    }
  }
  void rehash(std::size_t size) {  // size: a power of two
    slots_.assign(size, kEmpty);
    const std::size_t mask = size - 1;
    for (std::size_t k = 0; k < hosts_.size(); ++k) {
      std::size_t i = hash(hosts_[k]) & mask;
      while (slots_[i] != kEmpty) i = (i + 1) & mask;
      slots_[i] = static_cast<uint32_t>(k);
    }
  }

  std::vector<HostSpec> hosts_;
  std::vector<uint32_t> slots_;  // positions in hosts_, kEmpty where none
};

// ClusterShell's operators; the right side is a filter as for exclusions.
HostSet combine(char op, const HostSet& left, const HostSet& right) {
  const Matcher in_right(right.hosts());
  HostSet out;
  for (const auto& h : left.hosts()) {
    if (in_right.matches(h) == (op == '&')) out.add(h);
  }
  if (op == '^') {
    const Matcher in_left(left.hosts());
    for (const auto& h : right.hosts()) {
      if (!in_left.matches(h)) out.add(h);
    }
  }
  return out;
}

// pdsh's /REGEX/ (keep the matches) and -/REGEX/ (drop them), on host names: a
// POSIX extended regular expression, by the C library's regcomp() as in pdsh.
// (std::regex matched with one stack frame per character of the name: a long
// name overflowed the stack.)
struct Filter {
  std::shared_ptr<regex_t> re;
  bool drop = false;

  bool matches(const std::string& name) const {
    regmatch_t whole{0, static_cast<regoff_t>(name.size())};  // REG_STARTEND: NULs are bytes too
    return ::regexec(re.get(), name.c_str(), 0, &whole, REG_STARTEND) == 0;
  }
};

// regcomp() parses a group by recursing into it: thousands of nested groups
// overflowed the stack. Real filters nest a few.
constexpr int kMaxFilterNesting = 64;

// What a host list collects before it is finished: exclusions and filters wait
// until every item is in.
struct Scope {
  HostSet hosts;
  std::vector<HostSpec> excluded;
  std::vector<Filter> filters;

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

bool is_include_line(string_view line) {
  return line.starts_with("#include") && (line.size() == 8 || is_list_blank(line[8]));
}

// `line` without its comment: from a '#' at the start of the line or of an item
// (after a blank or a comma). Inside a name it is part of it (gpu-#4), as nodeset
// and pdsh -w keep it: a name cut short at a '#' would run on another host.
string_view without_comment(string_view line) {
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '#' && (i == 0 || is_list_blank(line[i - 1]) || line[i - 1] == ',')) return line.substr(0, i);
  }
  return line;
}

// The first run of bytes in `text` that no host list holds, as {offset, length}:
// what does not print (util::unprintable_length), but for the blanks that
// separate items.
std::optional<std::pair<std::size_t, std::size_t>> non_text(string_view text) {
  const auto bad_at = [&](std::size_t i) { return is_list_blank(text[i]) ? 0 : util::unprintable_length(text, i); };
  constexpr std::size_t kShown = 8;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t n = bad_at(i);
    if (n == 0) {
      i += util::utf8_length(text, i);
      continue;
    }
    std::size_t end = i + n;
    while (end < text.size() && end - i < kShown && (n = bad_at(end)) > 0) end += n;
    return std::pair{i, end - i};
  }
  return std::nullopt;
}

// Refuses text that cannot name a host: it would go to DNS or ssh_config as it
// is, or, past a NUL, be cut short. `file`: the hosts file it came from ("" for
// -w and groups), for the hint.
void check_text(string_view text, string_view file) {
  const auto bad = non_text(text);
  if (!bad) return;
  const string_view run = text.substr(bad->first, bad->second);
  const std::string convert =
      file.empty() ? std::string("write host names in ASCII or UTF-8")
                   : "a hosts file is ASCII or UTF-8 text; convert it, e.g. iconv -f UTF-16 -t UTF-8 " +
                         escape_for_message(file) + " > hosts.utf8";
  std::string what, fix;
  if (run.find('\0') != string_view::npos) {
    what = "a NUL byte", fix = convert;
  } else if (run.starts_with("\xef\xbb\xbf")) {
    what = "a byte-order mark", fix = file.empty() ? "remove it" : "save the file without one";
  } else if (util::is_utf8(run)) {
    what = "a control character", fix = "remove it";
  } else {
    what = "not UTF-8 text", fix = convert;
  }
  fail_host_list(text, quote_for_message(run) + " at " + column_text(bad->first) + " cannot be in a host name: " +
                           what + " (" + fix + ")");
}

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
    std::size_t line_no = 0;
    while (!text.empty()) {
      ++line_no;
      const auto nl = text.find('\n');
      const string_view line = text.substr(0, nl);
      text.remove_prefix(nl == string_view::npos ? text.size() : nl + 1);
      try {
        // A NUL anywhere, even in a comment, says this is not a text file.
        if (line.find('\0') != string_view::npos) check_text(line, source);
        if (!is_include_line(line)) check_text(without_comment(line), source);
        add_line(line, scope, Mode::include, {}, base);
      } catch (const UsageError& e) {
        throw UsageError(escape_for_message(source) + ":" + std::to_string(line_no) + ": " + e.what());
      }
    }
  }

  // The hosts of a file, finished: its exclusions and filters apply to it alone.
  std::vector<HostSpec> file_hosts(const fs::path& file) {
    std::error_code ec;
    fs::path identity = fs::weakly_canonical(file, ec);
    if (ec) identity = file;
    for (std::size_t i = 0; i < chain_.size(); ++i) {
      if (chain_[i].second != identity) continue;
      std::string cycle;
      for (std::size_t j = i; j < chain_.size(); ++j) cycle += chain_[j].first.string() + " -> ";
      throw UsageError("hosts file " + quote_for_message(file.string()) + " includes itself (" +
                       escape_for_message(cycle + file.string()) + ")");
    }
    const std::string text = read_list_file(file, "hosts file");
    chain_.emplace_back(file, identity);
    Scope scope;
    add_text(text, file.string(), scope, file.parent_path());
    chain_.pop_back();
    return std::move(scope).finish();
  }

 private:
  // One line: items and operators, evaluated left to right. `source` is the group
  // source of a group's definition, `base` where `#include` looks.
  void add_line(string_view line, Scope& scope, Mode mode, string_view source, const fs::path& base) {
    if (is_include_line(line)) {
      include(line, scope, base);
      return;
    }
    line = without_comment(line);
    HostSet chain;
    char op = 0;             // an operator waiting for its right side
    std::size_t op_at = 0;
    bool after_item = false;  // the last thing read was an item (blanks may follow)
    std::string special;      // that item was an exclusion or filter: no operator may follow
    std::size_t i = 0;
    while (true) {
      while (i < line.size() && is_list_blank(line[i])) ++i;
      if (i == line.size()) break;
      const char c = line[i];
      if (c == ',') {
        if (op) missing_right(line, op, op_at);
        after_item = false;
        special.clear();
        ++i;
        continue;
      }
      if (c == '!' || c == '&' || (c == '^' && after_item)) {
        if (op) {
          fail_host_list(line, "'" + std::string(1, c) + "' at " + column_text(i) + " follows '" + std::string(1, op) +
                         "' at " + column_text(op_at) + " (one operator between two items, as in " +
                         operator_meaning(c) + ")");
        }
        if (!after_item) {
          fail_host_list(line, "'" + std::string(1, c) + "' at " + column_text(i) + " has nothing on its left (write " +
                         operator_meaning(c) + ")");
        }
        if (!special.empty()) {
          fail_host_list(line, quote_for_message(special) + " cannot take part in '" + std::string(1, c) +
                         "' (exclusions and filters apply to the whole list; write " +
                         operator_meaning(c) + ", and " + escape_for_message(special) + " after a comma)");
        }
        op = c;
        op_at = i;
        after_item = false;
        ++i;
        continue;
      }

      const std::size_t start = i;
      const bool exclusion = c == '-';
      if (exclusion) {
        if (op) {
          fail_host_list(line, "'-' at " + column_text(i) + " after '" + std::string(1, op) +
                         "': a host name cannot start with '-' (write " + operator_meaning(op) +
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
      check_text(whole, {});  // a hosts file's lines were checked whole
      i = end;
      after_item = true;
      special.clear();

      if (token.front() == '/') {
        if (op) {
          fail_host_list(line, "the filter " + quote_for_message(token) + " cannot take part in '" + std::string(1, op) +
                         "' (filters apply to the whole list; write it after a comma)");
        }
        scope.filters.push_back(filter(token, exclusion || mode == Mode::exclude));
        special = whole;
        continue;
      }
      if (token.front() == '#') {  // after an operator or a '-': a comment there would cut the list short
        fail_host_list(line, quote_for_message(token) + " at " + column_text(i - token.size()) +
                                 ": a host name cannot start with '#' (a '#' starts a comment after a blank or a "
                                 "comma, and is part of a name inside one)");
      }
      HostSet operand = item(token, source);
      if (exclusion) {
        scope.excluded.insert(scope.excluded.end(), operand.hosts().begin(), operand.hosts().end());
        special = whole;
        continue;
      }
      if (op) {
        chain = combine(op, chain, operand);
        op = 0;
      } else {
        chain.add_all(std::move(operand));
      }
    }
    if (op) missing_right(line, op, op_at);
    scope.hosts.add_all(std::move(chain));
  }

  // pdsh's `#include FILE` (in the first column): FILE's hosts. A name that is not
  // absolute and does not start with ./ or ../ is relative to `base`.
  void include(string_view line, Scope& scope, const fs::path& base) {
    const string_view name = trim_blanks(line.substr(8));
    if (name.empty() || std::any_of(name.begin(), name.end(), is_list_blank)) {
      fail_host_list(line, "#include takes one file name (write #include FILE)");
    }
    fs::path file{std::string(name)};
    if (!file.is_absolute() && !name.starts_with("./") && !name.starts_with("../")) file = base / file;
    scope.hosts.add_all(file_hosts(file));
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

  static Filter filter(string_view token, bool drop) {
    if (token.size() < 2 || token.back() != '/') {
      fail_host_list(token, "the filter " + quote_for_message(token) +
                      " must end with '/': a filter runs to the next comma or blank (write /REGEX/, "
                      "like /^node1/)");
    }
    const string_view text = token.substr(1, token.size() - 2);
    if (text.empty()) fail_host_list(token, "empty filter (write /REGEX/, like /^node1/)");
    int depth = 0, deepest = 0;  // counts '(' in brackets too: an upper bound
    for (char c : text) {
      if (c == '(') deepest = std::max(deepest, ++depth);
      if (c == ')' && depth > 0) --depth;
    }
    if (deepest > kMaxFilterNesting) {
      fail_host_list(token, "bad regular expression " + quote_for_message(text) + ": groups nested more than " +
                      std::to_string(kMaxFilterNesting) + " deep");
    }
    if (text.find('\0') != string_view::npos) fail_host_list(token, "a NUL byte in the filter " + quote_for_message(text));
    auto re = std::make_unique<regex_t>();
    if (const int rc = ::regcomp(re.get(), std::string(text).c_str(), REG_EXTENDED | REG_NOSUB); rc != 0) {
      char why[256];
      ::regerror(rc, re.get(), why, sizeof why);
      fail_host_list(token, "bad regular expression " + quote_for_message(text) + ": " + why);
    }
    return Filter{std::shared_ptr<regex_t>(re.release(),
                                           [](regex_t* r) {
                                             ::regfree(r);
                                             delete r;
                                           }),
                  drop};
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
  std::vector<std::pair<fs::path, fs::path>> chain_;             // files being read: as named, canonical
  std::vector<std::pair<std::string, std::string>> group_chain_;  // groups being expanded: key, shown
  std::map<std::string, std::vector<HostSpec>> groups_done_;
};

}  // namespace

std::string read_list_file(const fs::path& file, string_view kind) {
  const auto fail_read = [&](int err) {
    throw UsageError("cannot read " + std::string(kind) + " " + quote_for_message(file.string()) + ": " +
                     std::strerror(err));
  };
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> in(std::fopen(file.c_str(), "rb"), &std::fclose);
  if (!in) fail_read(errno);
  std::string text;
  char buffer[16384];
  std::size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof buffer, in.get())) > 0) text.append(buffer, got);
  if (std::ferror(in.get())) fail_read(errno != 0 ? errno : EIO);
  return text;
}

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

std::vector<HostSpec> exclude_hosts(std::vector<HostSpec> hosts, const std::vector<HostSpec>& excluded) {
  if (excluded.empty()) return hosts;
  const Matcher matcher(excluded);
  std::erase_if(hosts, [&](const HostSpec& host) { return matcher.matches(host); });
  return hosts;
}

std::vector<HostSpec> dedup_hosts(std::vector<HostSpec> hosts) {
  HostSet unique;
  unique.reserve(hosts.size());
  for (auto& h : hosts) unique.add(std::move(h));
  return std::move(unique).take();
}

}  // namespace tpush::inventory
