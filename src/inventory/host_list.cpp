#include "tpush/inventory/host_list.h"

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_set>
#include <utility>
#include <vector>

#include "tpush/util/error.h"

namespace tpush::inventory {
namespace {

namespace fs = std::filesystem;
using std::string_view;

constexpr string_view kRangeHint = "ranges look like [1-5] or [01-10,12]";

std::string in_quotes(string_view text) { return "'" + std::string(text) + "'"; }

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f';
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool all_digits(string_view s) {
  for (char c : s) {
    if (!is_digit(c)) return false;
  }
  return !s.empty();
}

string_view trim(string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
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
    if (is_space(c) || c == '[' || c == ']' || c == '%' || c == '@' || c == ',') return false;
  }
  return true;
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

// One bracket group's content, e.g. "01-04,7", expanded to its values.
// `at` is the offset of the content within `item`, for messages.
std::vector<std::string> expand_range_group(string_view content, string_view item, std::size_t at) {
  const std::string group = "[" + std::string(content) + "]";
  if (content.empty())
    fail(item, "empty range [] at " + column(at - 1) + " (" + std::string(kRangeHint) + ")");

  std::vector<std::string> values;
  std::size_t start = 0;
  while (start <= content.size()) {
    auto comma = content.find(',', start);
    if (comma == string_view::npos) comma = content.size();
    const string_view term = content.substr(start, comma - start);
    const std::size_t term_at = at + start;
    if (term.empty()) {
      fail(item, "empty entry in " + group + " at " + column(term_at) + " (remove the extra ',')");
    }

    const auto dash = term.find('-');
    const string_view lo = term.substr(0, dash);
    const string_view hi = dash == string_view::npos ? string_view{} : term.substr(dash + 1);
    if (dash != string_view::npos) {
      if (hi.find('-') != string_view::npos) {
        fail(item, in_quotes(term) + " in " + group + " is not a range (" +
                       std::string(kRangeHint) + ")");
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
        fail(item, in_quotes(number) + " in " + group + " is not a number (" +
                       std::string(kRangeHint) + ")");
      }
      if (number.size() > 18) {
        fail(item, "number " + in_quotes(number) + " in " + group + " is too long");
      }
    }

    if (dash == string_view::npos) {
      values.emplace_back(lo);  // a single number is kept as written, padding and all
    } else {
      const uint64_t low = std::stoull(std::string(lo));
      const uint64_t high = std::stoull(std::string(hi));
      if (low > high) {
        std::string fixed(item);
        fixed.replace(term_at, term.size(), std::string(hi) + "-" + std::string(lo));
        fail(item, "range " + std::string(term) + " runs backwards (write " + fixed + ")");
      }
      if (high - low >= max_expanded_hosts || values.size() + (high - low) >= max_expanded_hosts) {
        fail(item, "range " + std::string(term) + " expands to more than " +
                       std::to_string(max_expanded_hosts) + " hosts (split it up)");
      }
      // pdsh and clush: a lower bound with a leading zero fixes the width.
      const std::size_t width = lo.size() > 1 && lo.front() == '0' ? lo.size() : 1;
      for (uint64_t n = low; n <= high; ++n) {
        std::string digits = std::to_string(n);
        if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
        values.push_back(std::move(digits));
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
    if (!literal.empty()) result.parts.push_back({std::move(literal)});
    literal.clear();
    result.parts.push_back(
        expand_range_group(pattern.substr(i + 1, close - i - 1), item, at + i + 1));
    // Each factor is at most the maximum, so checking after each step cannot overflow.
    result.count *= result.parts.back().size();
    if (result.count > max_expanded_hosts) {
      fail(item,
           "expands to more than " + std::to_string(max_expanded_hosts) + " hosts (split it up)");
    }
    i = close + 1;
  }
  if (!literal.empty()) result.parts.push_back({std::move(literal)});
  return result;
}

[[noreturn]] void fail_read(const fs::path& file, int err) {
  throw UsageError("cannot read hosts file " + in_quotes(file.string()) + ": " +
                   std::strerror(err));
}

// Reads a whole file; failures name the file and the system's reason.
std::string read_file_text(const fs::path& file) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> in(std::fopen(file.c_str(), "rb"), &std::fclose);
  if (!in) fail_read(file, errno);
  std::string text;
  char buffer[16384];
  std::size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof buffer, in.get())) > 0) text.append(buffer, got);
  if (std::ferror(in.get())) fail_read(file, errno != 0 ? errno : EIO);
  return text;
}

// Collects the hosts of items, expressions and files, following ^FILE includes and refusing cycles.
class Expander {
 public:
  std::vector<HostSpec> take() { return dedup_hosts(std::move(out_)); }

  void add_expression(string_view expr) {
    std::size_t depth = 0;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= expr.size(); ++i) {
      if (i == expr.size() || (expr[i] == ',' && depth == 0)) {
        const string_view item = trim(expr.substr(start, i - start));
        if (!item.empty()) add_item(item);  // tolerant, like pdsh: "a,,b" and "a," are fine
        start = i + 1;
      } else if (expr[i] == '[') {
        ++depth;
      } else if (expr[i] == ']' && depth > 0) {
        --depth;
      }
    }
  }

  void add_text(string_view text, string_view source) {
    std::size_t line_no = 0;
    while (!text.empty()) {
      ++line_no;
      const auto nl = text.find('\n');
      string_view line = text.substr(0, nl);
      text.remove_prefix(nl == string_view::npos ? text.size() : nl + 1);
      line = trim(line.substr(0, line.find('#')));
      if (line.empty()) continue;
      try {
        add_expression(line);
      } catch (const UsageError& e) {
        throw UsageError(std::string(source) + ":" + std::to_string(line_no) + ": " + e.what());
      }
    }
  }

  void add_file(const fs::path& file) {
    std::error_code ec;
    fs::path identity = fs::weakly_canonical(file, ec);
    if (ec) identity = file;
    for (std::size_t i = 0; i < chain_.size(); ++i) {
      if (chain_[i].second != identity) continue;
      std::string cycle;
      for (std::size_t j = i; j < chain_.size(); ++j) cycle += chain_[j].first.string() + " -> ";
      throw UsageError("hosts file " + in_quotes(file.string()) + " includes itself (" + cycle +
                       file.string() + ")");
    }
    const std::string text = read_file_text(file);
    chain_.emplace_back(file, identity);
    add_text(text, file.string());
    chain_.pop_back();
  }

 private:
  void add_item(string_view item) {
    if (item.front() == '^') {
      const string_view name = trim(item.substr(1));
      if (name.empty()) fail(item, "'^' needs a file name (write ^hosts.txt)");
      add_file(fs::path(std::string(name)));
      return;
    }
    const auto space = item.find_first_of(" \t\r\n\v\f");
    if (space != string_view::npos) {
      fail(item, "whitespace at " + column(space) + " (separate hosts with commas)");
    }

    std::string user;
    string_view rest = item;
    std::size_t rest_at = 0;
    if (const auto at_sign = item.find('@'); at_sign != string_view::npos) {
      user = item.substr(0, at_sign);
      rest = item.substr(at_sign + 1);
      rest_at = at_sign + 1;
      if (user.empty()) {
        fail(item, "missing user name before '@' (write user@host or drop the '@')");
      }
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
      const string_view inside =
          close == string_view::npos ? string_view{} : rest.substr(1, close - 1);
      if (inside.find(':') != string_view::npos) {
        add_bracketed_ipv6(item, user, rest, close);
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
      emit(item, user, std::string(rest), 0, std::string(rest));
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
    check_room(item, host_pattern.count);  // before building the names
    for (auto& name : host_pattern.names()) {
      std::string text = port != 0 ? name + ":" + std::to_string(port) : name;
      emit(item, user, std::move(name), port, std::move(text));
    }
  }

  void add_bracketed_ipv6(string_view item, const std::string& user, string_view rest,
                          std::size_t close) {
    const string_view addr = rest.substr(1, close - 1);
    if (!looks_like_ipv6(addr)) {
      fail(item, in_quotes(addr) + " in brackets is not an IPv6 address (write [2001:db8::5]:22)");
    }
    const string_view after = rest.substr(close + 1);
    if (after.empty()) {
      emit(item, user, std::string(addr), 0, std::string(addr));
      return;
    }
    if (after.front() != ':') {
      fail(item, "unexpected " + in_quotes(after) + " after the IPv6 address (write [addr]:port)");
    }
    const uint16_t port = parse_port(after.substr(1), item);
    emit(item, user, std::string(addr), port,
         "[" + std::string(addr) + "]:" + std::to_string(port));
  }

  // Refuses to grow the list past max_expanded_hosts by `more` hosts.
  void check_room(string_view item, std::size_t more) const {
    if (more > max_expanded_hosts - out_.size()) {
      fail(item, "the host list expands to more than " + std::to_string(max_expanded_hosts) +
                     " hosts (split it up)");
    }
  }

  void emit(string_view item, const std::string& user, std::string host, uint16_t port,
            std::string text) {
    check_room(item, 1);
    out_.push_back(HostSpec{user, std::move(host), port, std::move(text)});
  }

  std::vector<HostSpec> out_;
  std::vector<std::pair<fs::path, fs::path>> chain_;  // files being read: as named, canonical
};

}  // namespace

std::vector<HostSpec> expand_host_list(std::string_view expr) {
  Expander expander;
  expander.add_expression(expr);
  return expander.take();
}

std::vector<HostSpec> parse_hosts_text(std::string_view text, std::string_view source) {
  Expander expander;
  expander.add_text(text, source);
  return expander.take();
}

std::vector<HostSpec> read_hosts_file(const std::filesystem::path& file) {
  Expander expander;
  expander.add_file(file);
  return expander.take();
}

std::vector<HostSpec> exclude_hosts(std::vector<HostSpec> hosts,
                                    const std::vector<HostSpec>& excluded) {
  const auto matches = [](const HostSpec& host, const HostSpec& ex) {
    return host.host == ex.host && (ex.user.empty() || ex.user == host.user) &&
           (ex.port == 0 || ex.port == host.port);
  };
  std::erase_if(hosts, [&](const HostSpec& host) {
    for (const auto& ex : excluded) {
      if (matches(host, ex)) return true;
    }
    return false;
  });
  return hosts;
}

std::vector<HostSpec> dedup_hosts(std::vector<HostSpec> hosts) {
  struct Key {
    std::string_view user, host;
    uint16_t port;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      const std::hash<std::string_view> h;
      return (h(k.host) * 31 + h(k.user)) * 31 + k.port;
    }
  };
  std::vector<bool> keep(hosts.size());
  {
    std::unordered_set<Key, KeyHash> seen;  // views into `hosts`, gone before it changes
    seen.reserve(hosts.size());
    for (std::size_t i = 0; i < hosts.size(); ++i) {
      keep[i] = seen.insert(Key{hosts[i].user, hosts[i].host, hosts[i].port}).second;
    }
  }
  std::vector<HostSpec> unique;
  unique.reserve(hosts.size());
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    if (keep[i]) unique.push_back(std::move(hosts[i]));
  }
  return unique;
}

}  // namespace tpush::inventory
