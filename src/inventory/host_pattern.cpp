#include "tpush/inventory/host_pattern.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "tpush/util/string.h"

namespace tpush::inventory {
namespace {

using std::string_view;

constexpr string_view kRangeHint = "ranges look like [1-5], [01-10,12] or [1-9/2]";

bool is_hex(char c) { return util::is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool all_digits(string_view s) {
  for (char c : s) {
    if (!util::is_digit(c)) return false;
  }
  return !s.empty();
}

// An item without the blanks and newlines around it (the list blanks and '\n':
// util::trim's set).
string_view trim_item(string_view s) { return util::trim(s); }

// pdsh's `RCMD_TYPE:` before a host (exec:host, ssh:user@host), which reads like a
// host:port here: refused with a message that says so.
void refuse_rcmd_type(string_view before_colon, string_view item) {
  for (string_view type : {"ssh", "rsh", "exec", "mrsh", "krb4", "qsh", "mqsh", "xcpu"}) {
    if (before_colon == type) {
      fail_host_list(item, quote_for_message(std::string(type) + ":") +
                     " is pdsh's RCMD_TYPE prefix, which tpush does not take (write [user@]host[:port])");
    }
  }
}

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
    if (is_list_blank(c) || c == '[' || c == ']' || c == '%' || c == '@' || c == ',') return false;
  }
  return true;
}

uint16_t parse_port(string_view port, string_view item) {
  if (port.find_first_of("[]") != string_view::npos) {
    throw UsageError("bad port " + quote_for_message(port) + " in " + quote_for_message(item) +
                     " (ranges apply to the host part only)");
  }
  if (port.empty()) {
    throw UsageError("missing port after ':' in " + quote_for_message(item) +
                     " (write host:PORT with PORT 1-65535, or drop the ':')");
  }
  unsigned long value = 0;
  bool ok = all_digits(port) && port.size() <= 5;
  if (ok) {
    for (char c : port) value = value * 10 + static_cast<unsigned long>(c - '0');
    ok = value >= 1 && value <= 65535;
  }
  if (!ok) {
    throw UsageError("bad port " + quote_for_message(port) + " in " + quote_for_message(item) +
                     " (ports are 1-65535)");
  }
  return static_cast<uint16_t>(value);
}

uint64_t to_number(string_view digits) {
  uint64_t n = 0;
  for (char c : digits) n = n * 10 + static_cast<uint64_t>(c - '0');
  return n;
}

// One entry of a bracket group, read: a number, or a range with an optional step.
struct RangeTerm {
  string_view lo, hi;  // hi empty for a single number
  string_view range;   // "lo-hi" as written, for the fix of a backwards range
  uint64_t step = 1;
  bool is_range = false;
};

// Reads `term` (trimmed, not empty) of `group`, or fails naming what is wrong
// and how to write it.
RangeTerm parse_range_term(string_view term, const std::string& group, string_view item) {
  RangeTerm t;
  const auto slash = term.find('/');
  t.range = trim_item(term.substr(0, slash));
  const string_view step_text = slash == string_view::npos ? string_view{} : trim_item(term.substr(slash + 1));
  const auto dash = t.range.find('-');
  t.is_range = dash != string_view::npos;
  t.lo = trim_item(t.range.substr(0, dash));
  t.hi = t.is_range ? trim_item(t.range.substr(dash + 1)) : string_view{};
  if (t.is_range) {
    if (t.hi.find('-') != string_view::npos) {
      fail_host_list(item, quote_for_message(term) + " in " + group + " is not a range (" + std::string(kRangeHint) + ")");
    }
    if (t.lo.empty()) {
      fail_host_list(item, "range " + quote_for_message(term) + " in " + group + " has no lower bound (" +
                     std::string(kRangeHint) + ")");
    }
    if (t.hi.empty()) {
      fail_host_list(item, "range " + quote_for_message(term) + " in " + group + " has no upper bound (" +
                     std::string(kRangeHint) + ")");
    }
  }
  for (string_view number : {t.lo, t.hi}) {
    if (number.empty()) continue;
    if (!all_digits(number)) {
      fail_host_list(item, quote_for_message(number) + " in " + group + " is not a number (" + std::string(kRangeHint) + ")");
    }
    if (number.size() > max_range_digits) {
      fail_host_list(item, "number " + quote_for_message(number) + " in " + group + " is too long");
    }
  }
  if (slash != string_view::npos) {
    if (!t.is_range) {
      fail_host_list(item, "step in " + quote_for_message(term) + " needs a range (write " + escape_for_message(t.lo) + "-N/" +
                     escape_for_message(step_text) + ")");
    }
    if (!all_digits(step_text) || step_text.size() > max_range_digits || to_number(step_text) == 0) {
      fail_host_list(item, "bad step " + quote_for_message(step_text) + " in " + group +
                     " (a step is a whole number from 1, as in [1-9/2])");
    }
    t.step = to_number(step_text);
  }
  return t;
}

// One bracket group's content, e.g. "01-04,7" or "1-9/2", expanded to its values,
// each once. `at` is the offset of the content within `item`, for messages.
std::vector<std::string> expand_range_group(string_view content, string_view item, std::size_t at) {
  const std::string group = "[" + escape_for_message(content) + "]";
  if (trim_item(content).empty()) {
    fail_host_list(item, "empty range " + group + " at " + column_text(at - 1) + " (" + std::string(kRangeHint) + ")");
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
    const string_view term = trim_item(raw);
    const std::size_t term_at = at + start + (term.empty() ? 0 : raw.find(term.front()));
    if (term.empty()) {
      fail_host_list(item, "empty entry in " + group + " at " + column_text(term_at) + " (remove the extra ',')");
    }
    const RangeTerm t = parse_range_term(term, group, item);
    if (!t.is_range) {
      keep(std::string(t.lo));  // a single number is kept as written, padding and all
    } else {
      const uint64_t low = to_number(t.lo);
      const uint64_t high = to_number(t.hi);
      if (low > high) {
        std::string fixed(item);
        fixed.replace(term_at, t.range.size(), std::string(t.hi) + "-" + std::string(t.lo));
        fail_host_list(item, "range " + escape_for_message(term) + " runs backwards (write " + escape_for_message(fixed) + ")");
      }
      const uint64_t count = (high - low) / t.step + 1;
      if (count > max_expanded_hosts || values.size() + count > max_expanded_hosts) {
        fail_host_list(item, "range " + escape_for_message(term) + " expands to more than " +
                       std::to_string(max_expanded_hosts) + " hosts (split it up)");
      }
      // pdsh and clush: a lower bound with a leading zero fixes the width.
      const std::size_t width = t.lo.size() > 1 && t.lo.front() == '0' ? t.lo.size() : 1;
      for (uint64_t n = low; n <= high; n += t.step) {
        std::string digits = std::to_string(n);
        if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
        keep(std::move(digits));
      }
    }
    start = comma + 1;
  }
  return values;
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

}  // namespace

HostPattern::HostPattern(string_view pattern, string_view item, std::size_t at) : item_(item) {
  std::string literal;
  std::optional<std::size_t> last_close;  // the previous group's ']'
  std::size_t i = 0;
  while (i < pattern.size()) {
    const char c = pattern[i];
    if (c == ']') {
      fail_host_list(item, "stray ']' at " + column_text(at + i) + " (ranges look like node[1-4])");
    }
    if (c != '[') {
      literal += c;
      ++i;
      continue;
    }
    const auto close = pattern.find_first_of("[]", i + 1);
    if (close == string_view::npos) {
      fail_host_list(item, "unclosed '[' at " + column_text(at + i) + " (add ']')");
    }
    if (pattern[close] == '[') {
      fail_host_list(item, "'[' at " + column_text(at + close) + " inside the range opened at " + column_text(at + i) +
                     " (ranges cannot nest)");
    }
    if (last_close && !touching_ && (literal.empty() || all_digits(literal))) {
      touching_ = std::make_pair(at + *last_close, at + i);
    }
    if (!literal.empty()) parts_.push_back({std::move(literal)});
    literal.clear();
    parts_.push_back(expand_range_group(pattern.substr(i + 1, close - i - 1), item, at + i + 1));
    // Each factor is at most the maximum, so checking after each step cannot overflow.
    count_ *= parts_.back().size();
    if (count_ > max_expanded_hosts) {
      fail_host_list(item, "expands to more than " + std::to_string(max_expanded_hosts) + " hosts (split it up)");
    }
    last_close = close;
    i = close + 1;
  }
  if (!literal.empty()) parts_.push_back({std::move(literal)});
}


std::vector<std::string> HostPattern::names() const {
  std::vector<std::string> out{""};
  for (const auto& part : parts_) {
    std::vector<std::string> next;
    next.reserve(out.size() * part.size());
    for (const auto& prefix : out) {
      for (const auto& value : part) next.push_back(prefix + value);
    }
    out = std::move(next);
  }
  if (touching_ && out.size() > 1) {
    std::unordered_set<string_view> seen;
    seen.reserve(out.size());
    for (const auto& name : out) {
      if (seen.insert(name).second) continue;
      const auto [close, open] = *touching_;
      std::string fixed(item_);
      fixed.insert(close + 1, "-");
      fail_host_list(item_, "the ranges at " + column_text(close) + " and " + column_text(open) + " run together, so " +
                      quote_for_message(name) + " comes out twice (put a separator between them: " +
                      escape_for_message(fixed) + ")");
    }
  }
  return out;
}

HostItem parse_host_item(string_view item) {
  HostItem result;
  string_view rest = item;
  std::size_t rest_at = 0;
  if (const auto at_sign = item.find('@'); at_sign != string_view::npos) {
    result.user = item.substr(0, at_sign);
    rest = item.substr(at_sign + 1);
    rest_at = at_sign + 1;
    if (result.user.empty()) fail_host_list(item, "missing user name before '@' (write user@host)");
    refuse_rcmd_type(string_view(result.user).substr(0, result.user.find(':')), item);
    if (result.user.find_first_of("[]:") != std::string::npos) {
      fail_host_list(item, "user name " + quote_for_message(result.user) +
                     " cannot hold '[', ']' or ':' (ranges and ports apply to the host part)");
    }
    if (const auto second = rest.find('@'); second != string_view::npos) {
      fail_host_list(item, "second '@' at " + column_text(rest_at + second) + " (write user@host)");
    }
  }
  if (rest.empty()) fail_host_list(item, "missing host name (write [user@]host[:port])");
  if (rest.front() == '#') {  // `alice@# note`: the comment would leave alice@ with no host
    fail_host_list(item, "a host name cannot start with '#' (write user@host; a '#' starts a comment after a "
                         "blank or a comma)");
  }

  // [v6addr] or [v6addr]:port
  if (rest.front() == '[') {
    const auto close = rest.find(']');
    const string_view inside = close == string_view::npos ? string_view{} : rest.substr(1, close - 1);
    if (inside.find(':') != string_view::npos) {
      if (!looks_like_ipv6(inside)) {
        fail_host_list(item, quote_for_message(inside) + " in brackets is not an IPv6 address (write [2001:db8::5]:22)");
      }
      result.address = std::string(inside);
      const string_view after = rest.substr(close + 1);
      if (after.empty()) return result;
      if (after.front() != ':') {
        fail_host_list(item, "unexpected " + quote_for_message(after) + " after the IPv6 address (write [addr]:port)");
      }
      result.port = parse_port(after.substr(1), item);
      return result;
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
      fail_host_list(item, "more than one ':' but " + quote_for_message(rest) +
                     " is not an IPv6 address (write host:port, or [ipv6]:port)");
    }
    result.address = std::string(rest);
    return result;
  }

  string_view pattern = rest;
  if (colons.size() == 1) {
    pattern = rest.substr(0, colons.front());
    if (!all_digits(rest.substr(colons.front() + 1))) refuse_rcmd_type(pattern, item);
    result.port = parse_port(rest.substr(colons.front() + 1), item);
  }
  if (pattern.empty()) fail_host_list(item, "missing host name before ':' (write host:port)");
  result.pattern.emplace(pattern, item, rest_at);
  result.wildcard = pattern.find_first_of("*?") != string_view::npos;
  return result;
}
std::string host_text(const std::string& host, uint16_t port) {
  if (port == 0) return host;
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

void fail_host_list(string_view item, const std::string& detail) { throw bad_host_list(item, detail); }

namespace {
constexpr string_view kListBlanks = " \t\r\v\f";  // what is_list_blank() takes
}  // namespace

bool is_list_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

string_view trim_blanks(string_view text) { return util::trim(text, kListBlanks); }

std::string column_text(std::size_t offset) { return "column " + std::to_string(offset + 1); }

UsageError bad_host_list(string_view item, const std::string& detail) {
  return UsageError("bad host list " + quote_for_message(item) + ": " + detail);
}

std::string escape_for_message(string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t bad = util::unprintable_length(text, i);
    if (bad == 0) {
      const std::size_t n = util::utf8_length(text, i);
      out.append(text.substr(i, n));
      i += n;
      continue;
    }
    for (const char c : text.substr(i, bad)) {
      const auto u = static_cast<unsigned char>(c);
      if (c == '\n') out += "\\n";
      else if (c == '\t') out += "\\t";
      else if (c == '\r') out += "\\r";
      else out += {'\\', 'x', kHex[u >> 4], kHex[u & 0xf]};
    }
    i += bad;
  }
  return out;
}

std::string quote_for_message(string_view text) { return "'" + escape_for_message(text) + "'"; }

void check_host_text(string_view text, string_view file) {
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

}  // namespace tpush::inventory
