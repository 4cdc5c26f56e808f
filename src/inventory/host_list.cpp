#include "tpush/inventory/host_list.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "tpush/util/error.h"

namespace tpush::inventory {
namespace {

namespace fs = std::filesystem;
using std::string_view;

constexpr string_view kRangeHint = "ranges look like [1-5], [01-10,12] or [1-9/2]";

std::string in_quotes(string_view text) { return quote_for_message(text); }

// Control characters escaped (\n, \t, \r, \xHH), so that a message stays one
// printable line.
std::string escaped(string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (u < 0x20 || u == 0x7f) {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

// Blanks separate items within a line; newlines separate lines.
bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool all_digits(string_view s) {
  for (char c : s) {
    if (!is_digit(c)) return false;
  }
  return !s.empty();
}

string_view trim(string_view s) {
  while (!s.empty() && (is_blank(s.front()) || s.front() == '\n')) s.remove_prefix(1);
  while (!s.empty() && (is_blank(s.back()) || s.back() == '\n')) s.remove_suffix(1);
  return s;
}

// "bad host list 'ITEM': DETAIL"
[[noreturn]] void fail(string_view item, const std::string& detail) {
  throw UsageError("bad host list " + in_quotes(item) + ": " + detail);
}

std::string column(std::size_t offset) { return "column " + std::to_string(offset + 1); }

// An IPv6 address as written between brackets or bare: hex groups, ':' and '.'
// (for an embedded IPv4), optionally followed by a %zone.
bool looks_like_ipv6(string_view s) {
  const auto percent = s.find('%');
  const string_view addr = s.substr(0, percent);
  if (addr.find(':') == string_view::npos) return false;
  for (char c : addr) {
    if (!is_hex(c) && c != ':' && c != '.') return false;
  }
  if (percent == string_view::npos) return true;
  const string_view zone = s.substr(percent + 1);
  if (zone.empty()) return false;
  for (char c : zone) {
    if (is_blank(c) || c == '[' || c == ']' || c == '%' || c == '@' || c == ',') return false;
  }
  return true;
}

// What HostSpec.text is for a host and port.
std::string host_text(const std::string& host, uint16_t port) {
  if (port == 0) return host;
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

uint16_t parse_port(string_view port, string_view item) {
  if (port.find_first_of("[]") != string_view::npos) {
    throw UsageError("bad port " + in_quotes(port) + " in " + in_quotes(item) +
                     " (ranges apply to the host part only)");
  }
  if (port.empty()) {
    throw UsageError("missing port after ':' in " + in_quotes(item) +
                     " (write host:PORT with PORT 1-65535, or drop the ':')");
  }
  unsigned long value = 0;
  bool ok = all_digits(port) && port.size() <= 5;
  if (ok) {
    for (char c : port) value = value * 10 + static_cast<unsigned long>(c - '0');
    ok = value >= 1 && value <= 65535;
  }
  if (!ok) {
    throw UsageError("bad port " + in_quotes(port) + " in " + in_quotes(item) +
                     " (ports are 1-65535)");
  }
  return static_cast<uint16_t>(value);
}

uint64_t to_number(string_view digits) {
  uint64_t n = 0;
  for (char c : digits) n = n * 10 + static_cast<uint64_t>(c - '0');
  return n;
}

// One bracket group's content, e.g. "01-04,7" or "1-9/2", expanded to its values,
// each once. `at` is the offset of the content within `item`, for messages.
std::vector<std::string> expand_range_group(string_view content, string_view item, std::size_t at) {
  const std::string group = "[" + escaped(content) + "]";
  if (trim(content).empty()) {
    fail(item, "empty range " + group + " at " + column(at - 1) + " (" + std::string(kRangeHint) + ")");
  }

  std::vector<std::string> values;
  std::unordered_set<std::string> seen;  // used when the group has several entries
  const bool several = content.find(',') != string_view::npos;
  const auto keep = [&](std::string value) {
    if (!several || seen.insert(value).second) values.push_back(std::move(value));
  };
  std::size_t start = 0;
  while (start <= content.size()) {
    auto comma = content.find(',', start);
    if (comma == string_view::npos) comma = content.size();
    const string_view raw = content.substr(start, comma - start);
    const string_view term = trim(raw);
    const std::size_t term_at = at + start + (term.empty() ? 0 : raw.find(term.front()));
    if (term.empty()) {
      fail(item, "empty entry in " + group + " at " + column(term_at) + " (remove the extra ',')");
    }

    const auto slash = term.find('/');
    const string_view range = trim(term.substr(0, slash));
    const string_view step_text = slash == string_view::npos ? string_view{} : trim(term.substr(slash + 1));
    const auto dash = range.find('-');
    const string_view lo = trim(range.substr(0, dash));
    const string_view hi = dash == string_view::npos ? string_view{} : trim(range.substr(dash + 1));
    if (dash != string_view::npos) {
      if (hi.find('-') != string_view::npos) {
        fail(item, in_quotes(term) + " in " + group + " is not a range (" + std::string(kRangeHint) + ")");
      }
      if (lo.empty()) {
        fail(item, "range " + in_quotes(term) + " in " + group + " has no lower bound (" +
                       std::string(kRangeHint) + ")");
      }
      if (hi.empty()) {
        fail(item, "range " + in_quotes(term) + " in " + group + " has no upper bound (" +
                       std::string(kRangeHint) + ")");
      }
    }
    for (string_view number : {lo, hi}) {
      if (number.empty()) continue;
      if (!all_digits(number)) {
        fail(item, in_quotes(number) + " in " + group + " is not a number (" + std::string(kRangeHint) + ")");
      }
      if (number.size() > 18) {
        fail(item, "number " + in_quotes(number) + " in " + group + " is too long");
      }
    }
    uint64_t step = 1;
    if (slash != string_view::npos) {
      if (dash == string_view::npos) {
        fail(item, "step in " + in_quotes(term) + " needs a range (write " + escaped(lo) + "-N/" +
                       escaped(step_text) + ")");
      }
      if (!all_digits(step_text) || step_text.size() > 18 || to_number(step_text) == 0) {
        fail(item, "bad step " + in_quotes(step_text) + " in " + group +
                       " (a step is a whole number from 1, as in [1-9/2])");
      }
      step = to_number(step_text);
    }

    if (dash == string_view::npos) {
      keep(std::string(lo));  // a single number is kept as written, padding and all
    } else {
      const uint64_t low = to_number(lo);
      const uint64_t high = to_number(hi);
      if (low > high) {
        std::string fixed(item);
        const std::string swapped = std::string(hi) + "-" + std::string(lo);
        fixed.replace(term_at, range.size(), swapped);
        fail(item, "range " + escaped(term) + " runs backwards (write " + escaped(fixed) + ")");
      }
      const uint64_t count = (high - low) / step + 1;
      if (count > max_expanded_hosts || values.size() + count > max_expanded_hosts) {
        fail(item, "range " + escaped(term) + " expands to more than " +
                       std::to_string(max_expanded_hosts) + " hosts (split it up)");
      }
      // pdsh and clush: a lower bound with a leading zero fixes the width.
      const std::size_t width = lo.size() > 1 && lo.front() == '0' ? lo.size() : 1;
      for (uint64_t n = low; n <= high; n += step) {
        std::string digits = std::to_string(n);
        if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
        keep(std::move(digits));
      }
    }
    start = comma + 1;
  }
  return values;
}

// A host part such as "rack[1-2]-node[01-03]": its literal pieces and expanded
// groups, in order; the names are the product, leftmost part varying slowest.
struct HostPattern {
  std::vector<std::vector<std::string>> parts;
  std::size_t count = 1;  // how many names, at most max_expanded_hosts
  // Two groups with nothing or only digits between them, whose names may collide:
  // the offsets in the item of the first one's ']' and the second one's '['.
  std::optional<std::pair<std::size_t, std::size_t>> touching;

  std::vector<std::string> names() const;
};

std::vector<std::string> HostPattern::names() const {
  std::vector<std::string> out{""};
  for (const auto& part : parts) {
    std::vector<std::string> next;
    next.reserve(out.size() * part.size());
    for (const auto& prefix : out) {
      for (const auto& value : part) next.push_back(prefix + value);
    }
    out = std::move(next);
  }
  return out;
}

// `at` is the offset of `pattern` within `item`, for messages.
HostPattern parse_host_pattern(string_view pattern, string_view item, std::size_t at) {
  HostPattern result;
  std::string literal;
  std::optional<std::size_t> last_close;  // the previous group's ']'
  std::size_t i = 0;
  while (i < pattern.size()) {
    const char c = pattern[i];
    if (c == ']') {
      fail(item, "stray ']' at " + column(at + i) + " (ranges look like node[1-4])");
    }
    if (c != '[') {
      literal += c;
      ++i;
      continue;
    }
    const auto close = pattern.find_first_of("[]", i + 1);
    if (close == string_view::npos) {
      fail(item, "unclosed '[' at " + column(at + i) + " (add ']')");
    }
    if (pattern[close] == '[') {
      fail(item, "'[' at " + column(at + close) + " inside the range opened at " + column(at + i) +
                     " (ranges cannot nest)");
    }
    if (last_close && !result.touching && (literal.empty() || all_digits(literal))) {
      result.touching = std::make_pair(at + *last_close, at + i);
    }
    if (!literal.empty()) result.parts.push_back({std::move(literal)});
    literal.clear();
    result.parts.push_back(expand_range_group(pattern.substr(i + 1, close - i - 1), item, at + i + 1));
    // Each factor is at most the maximum, so checking after each step cannot overflow.
    result.count *= result.parts.back().size();
    if (result.count > max_expanded_hosts) {
      fail(item, "expands to more than " + std::to_string(max_expanded_hosts) + " hosts (split it up)");
    }
    last_close = close;
    i = close + 1;
  }
  if (!literal.empty()) result.parts.push_back({std::move(literal)});
  return result;
}

// Refuses a pattern whose touching groups give a name twice: n[1-11][1-11] makes
// n111 from 1+11 and from 11+1, so the list would not say what it means.
void check_touching(const HostPattern& pattern, const std::vector<std::string>& names, string_view item) {
  if (!pattern.touching || names.size() < 2) return;
  std::unordered_set<string_view> seen;
  seen.reserve(names.size());
  for (const auto& name : names) {
    if (seen.insert(name).second) continue;
    const auto [close, open] = *pattern.touching;
    std::string fixed(item);
    fixed.insert(close + 1, "-");
    fail(item, "the ranges at " + column(close) + " and " + column(open) + " run together, so " +
                   in_quotes(name) + " comes out twice (put a separator between them: " + escaped(fixed) +
                   ")");
  }
}

// '*' any run of characters, '?' one character.
bool glob_match(string_view mask, string_view name) {
  std::size_t m = 0, n = 0;
  std::size_t star = string_view::npos, resume = 0;
  while (n < name.size()) {
    if (m < mask.size() && (mask[m] == '?' || mask[m] == name[n])) {
      ++m;
      ++n;
    } else if (m < mask.size() && mask[m] == '*') {
      star = m++;
      resume = n;
    } else if (star != string_view::npos) {
      m = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (m < mask.size() && mask[m] == '*') ++m;
  return m == mask.size();
}

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

// Hosts in order, each (user, host, port) once.
class HostSet {
 public:
  void add(HostSpec host) {
    std::string key = host.user + '\0' + host.host + '\0' + std::to_string(host.port);
    if (keys_.insert(std::move(key)).second) hosts_.push_back(std::move(host));
  }
  void add_all(const std::vector<HostSpec>& hosts) {
    for (const auto& h : hosts) add(h);
  }
  const std::vector<HostSpec>& hosts() const { return hosts_; }
  std::vector<HostSpec> take() && { return std::move(hosts_); }

 private:
  std::vector<HostSpec> hosts_;
  std::unordered_set<std::string> keys_;
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

// pdsh's /REGEX/ (keep the matches) and -/REGEX/ (drop them), on host names.
struct Filter {
  std::regex re;
  bool drop = false;
};

// What a host list collects before it is finished: exclusions and filters wait
// until every item is in.
struct Scope {
  HostSet hosts;
  std::vector<HostSpec> excluded;
  std::vector<Filter> filters;

  std::vector<HostSpec> finish() && {
    auto list = exclude_hosts(std::move(hosts).take(), excluded);
    for (const auto& f : filters) {
      std::erase_if(list, [&](const HostSpec& h) { return std::regex_search(h.host, f.re) == f.drop; });
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
  explicit Expander(const HostListOptions& options) : groups_(options.groups) {}

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
        add_line(line, scope, Mode::include, {}, base);
      } catch (const UsageError& e) {
        throw UsageError(std::string(source) + ":" + std::to_string(line_no) + ": " + e.what());
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
      throw UsageError("hosts file " + in_quotes(file.string()) + " includes itself (" +
                       escaped(cycle + file.string()) + ")");
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
    if (line.starts_with("#include") && (line.size() == 8 || is_blank(line[8]))) {
      include(line, scope, base);
      return;
    }
    line = line.substr(0, line.find('#'));
    HostSet chain;
    char op = 0;             // an operator waiting for its right side
    std::size_t op_at = 0;
    bool after_item = false;  // the last thing read was an item (blanks may follow)
    std::string special;      // that item was an exclusion or filter: no operator may follow
    std::size_t i = 0;
    while (true) {
      while (i < line.size() && is_blank(line[i])) ++i;
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
          fail(line, "'" + std::string(1, c) + "' at " + column(i) + " follows '" + std::string(1, op) +
                         "' at " + column(op_at) + " (one operator between two items, as in " +
                         operator_meaning(c) + ")");
        }
        if (!after_item) {
          fail(line, "'" + std::string(1, c) + "' at " + column(i) + " has nothing on its left (write " +
                         operator_meaning(c) + ")");
        }
        if (!special.empty()) {
          fail(line, in_quotes(special) + " cannot take part in '" + std::string(1, c) +
                         "' (exclusions and filters apply to the whole list; write " +
                         operator_meaning(c) + ", and " + escaped(special) + " after a comma)");
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
          fail(line, "'-' at " + column(i) + " after '" + std::string(1, op) +
                         "': a host name cannot start with '-' (write " + operator_meaning(op) +
                         "; a leading '-' excludes only at the start of an item)");
        }
        if (mode == Mode::exclude) {
          fail(line, "'-' at " + column(i) + " in a list that already excludes (drop the '-')");
        }
        ++i;
        if (i == line.size() || is_blank(line[i]) || line[i] == ',') {
          if (trim(line) == "-") {
            fail(line, "tpush does not read hosts from standard input, as pdsh -w - does (write "
                       "-H FILE)");
          }
          fail(line, "'-' at " + column(start) + " needs a host, @group, ^FILE or /REGEX/ right after it");
        }
      }
      const std::size_t end = item_end(line, i);
      const string_view token = line.substr(i, end - i);
      const string_view whole = line.substr(start, end - start);
      i = end;
      after_item = true;
      special.clear();

      if (token.front() == '/') {
        if (op) {
          fail(line, "the filter " + in_quotes(token) + " cannot take part in '" + std::string(1, op) +
                         "' (filters apply to the whole list; write it after a comma)");
        }
        scope.filters.push_back(filter(token, exclusion || mode == Mode::exclude));
        special = whole;
        continue;
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
        chain.add_all(operand.hosts());
      }
    }
    if (op) missing_right(line, op, op_at);
    scope.hosts.add_all(chain.hosts());
  }

  // pdsh's `#include FILE` (in the first column): FILE's hosts. A name that is not
  // absolute and does not start with ./ or ../ is relative to `base`.
  void include(string_view line, Scope& scope, const fs::path& base) {
    const string_view name = trim(line.substr(8));
    if (name.empty() || std::any_of(name.begin(), name.end(), is_blank)) {
      fail(line, "#include takes one file name (write #include FILE)");
    }
    fs::path file{std::string(name)};
    if (!file.is_absolute() && !name.starts_with("./") && !name.starts_with("../")) file = base / file;
    scope.hosts.add_all(file_hosts(file));
  }

  [[noreturn]] static void missing_right(string_view line, char op, std::size_t at) {
    fail(line, "'" + std::string(1, op) + "' at " + column(at) + " has nothing on its right (write " +
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
      if (is_blank(c) || c == ',') return j;
      if (plain && j > i && (c == '!' || c == '&' || c == '^')) return j;
    }
    return line.size();
  }

  static Filter filter(string_view token, bool drop) {
    if (token.size() < 2 || token.back() != '/') {
      fail(token, "the filter " + in_quotes(token) +
                      " must end with '/': a filter runs to the next comma or blank (write /REGEX/, "
                      "like /^node1/)");
    }
    const string_view text = token.substr(1, token.size() - 2);
    if (text.empty()) fail(token, "empty filter (write /REGEX/, like /^node1/)");
    try {
      return Filter{std::regex(std::string(text), std::regex::extended | std::regex::nosubs), drop};
    } catch (const std::regex_error& e) {
      std::string why = e.what();
      while (!why.empty() && why.back() == '.') why.pop_back();
      fail(token, "bad regular expression " + in_quotes(text) + ": " + why);
    }
  }

  // One item (or operand): ^FILE, @group, a wildcard, or [user@]host[:port].
  HostSet item(string_view token, string_view source) {
    HostSet out;
    if (token.front() == '^') {
      const string_view name = token.substr(1);
      if (name.empty()) fail(token, "'^' needs a file name right after it (write ^hosts.txt)");
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
    if (ref.empty()) fail(token, "'@' needs a group name right after it (write @rack1)");
    if (ref.front() == '@') {
      fail(token, "'@@' lists the names of groups, which tpush does not expand (write @GROUP)");
    }
    std::string group_source(source);
    if (const auto colon = ref.find(':'); colon != string_view::npos) {
      group_source = ref.substr(0, colon);
      ref = ref.substr(colon + 1);
      if (group_source.empty() || ref.empty()) {
        fail(token, "write @SOURCE:GROUP, like @local:rack1, or @GROUP");
      }
    }
    if (ref == "*") {
      out.add_all(all_hosts(token, group_source));
      return;
    }
    const HostPattern names = parse_host_pattern(ref, token, token.size() - ref.size());
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
      throw UsageError("group " + in_quotes(shown) + " includes itself (" + escaped(cycle + shown) + ")");
    }
    if (groups_ == nullptr) {
      fail(token, "unknown group " + in_quotes(shown) + " (no groups file is set up; a host name cannot start with '@')");
    }
    const auto definition = groups_->find(source, name);
    if (!definition) {
      fail(token, "unknown group " + in_quotes(shown) + " (groups come from " + groups_->origin() + ")");
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
      fail(token, "'*' and '?' select hosts of the group 'all' in a groups file, and no groups file is "
                  "set up (a host name cannot hold '*' or '?')");
    }
    if (!groups_->find(source, "all")) {
      fail(token, "'*' and '?' select hosts of the group 'all', which " + groups_->origin() +
                      " does not define (add a line 'all: HOSTS')");
    }
    return group(token, source, "all");
  }

  void host_item(string_view item, HostSet& out) {
    std::string user;
    string_view rest = item;
    std::size_t rest_at = 0;
    if (const auto at_sign = item.find('@'); at_sign != string_view::npos) {
      user = item.substr(0, at_sign);
      rest = item.substr(at_sign + 1);
      rest_at = at_sign + 1;
      if (user.find_first_of("[]:") != std::string::npos) {
        fail(item, "user name " + in_quotes(user) +
                       " cannot hold '[', ']' or ':' (ranges and ports apply to the host part)");
      }
      if (const auto second = rest.find('@'); second != string_view::npos) {
        fail(item, "second '@' at " + column(rest_at + second) + " (write user@host)");
      }
    }
    if (rest.empty()) fail(item, "missing host name (write [user@]host[:port])");

    // [v6addr] or [v6addr]:port
    if (rest.front() == '[') {
      const auto close = rest.find(']');
      const string_view inside = close == string_view::npos ? string_view{} : rest.substr(1, close - 1);
      if (inside.find(':') != string_view::npos) {
        add_bracketed_ipv6(item, user, rest, close, out);
        return;
      }
    }

    // Colons outside brackets: one separates the port, more mean a bare IPv6.
    std::vector<std::size_t> colons;
    std::size_t depth = 0;
    for (std::size_t i = 0; i < rest.size(); ++i) {
      if (rest[i] == '[') ++depth;
      if (rest[i] == ']' && depth > 0) --depth;
      if (rest[i] == ':' && depth == 0) colons.push_back(i);
    }
    if (colons.size() > 1) {
      if (!looks_like_ipv6(rest)) {
        fail(item, "more than one ':' but " + in_quotes(rest) +
                       " is not an IPv6 address (write host:port, or [ipv6]:port)");
      }
      emit(item, user, std::string(rest), 0, out);
      return;
    }

    string_view pattern = rest;
    uint16_t port = 0;
    if (colons.size() == 1) {
      pattern = rest.substr(0, colons.front());
      port = parse_port(rest.substr(colons.front() + 1), item);
    }
    if (pattern.empty()) fail(item, "missing host name before ':' (write host:port)");
    const HostPattern host_pattern = parse_host_pattern(pattern, item, rest_at);
    if (pattern.find_first_of("*?") != string_view::npos) {
      add_wildcard(item, user, host_pattern.names(), port, out);
      return;
    }
    check_room(item, host_pattern.count);  // before building the names
    auto names = host_pattern.names();
    check_touching(host_pattern, names, item);
    for (auto& name : names) emit(item, user, std::move(name), port, out);
  }

  void add_bracketed_ipv6(string_view item, const std::string& user, string_view rest, std::size_t close,
                          HostSet& out) {
    const string_view addr = rest.substr(1, close - 1);
    if (!looks_like_ipv6(addr)) {
      fail(item, in_quotes(addr) + " in brackets is not an IPv6 address (write [2001:db8::5]:22)");
    }
    const string_view after = rest.substr(close + 1);
    if (after.empty()) {
      emit(item, user, std::string(addr), 0, out);
      return;
    }
    if (after.front() != ':') {
      fail(item, "unexpected " + in_quotes(after) + " after the IPv6 address (write [addr]:port)");
    }
    emit(item, user, std::string(addr), parse_port(after.substr(1), item), out);
  }

  // The hosts of the group `all` whose names match a mask; a user or port in the
  // item replaces theirs.
  void add_wildcard(string_view item, const std::string& user, const std::vector<std::string>& masks,
                    uint16_t port, HostSet& out) {
    for (const auto& host : all_hosts(item, {})) {
      bool match = false;
      for (const auto& mask : masks) match = match || glob_match(mask, host.host);
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
      fail(item, "the host list expands to more than " + std::to_string(max_expanded_hosts) +
                     " hosts (split it up)");
    }
  }

  void emit(string_view item, const std::string& user, std::string host, uint16_t port, HostSet& out) {
    check_room(item, 1);
    ++emitted_;
    std::string text = host_text(host, port);
    out.add(HostSpec{user, std::move(host), port, std::move(text)});
  }

  const GroupSource* groups_;
  std::size_t emitted_ = 0;
  std::vector<std::pair<fs::path, fs::path>> chain_;             // files being read: as named, canonical
  std::vector<std::pair<std::string, std::string>> group_chain_;  // groups being expanded: key, shown
  std::map<std::string, std::vector<HostSpec>> groups_done_;
};

}  // namespace

std::string quote_for_message(string_view text) { return "'" + escaped(text) + "'"; }

std::string read_list_file(const fs::path& file, string_view kind) {
  const auto fail_read = [&](int err) {
    throw UsageError("cannot read " + std::string(kind) + " " + in_quotes(file.string()) + ": " +
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
  for (auto& h : hosts) unique.add(std::move(h));
  return std::move(unique).take();
}

}  // namespace tpush::inventory
