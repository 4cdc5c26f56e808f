// One item of a host list, `[user@]host[:port]`: bracket ranges (`node[01-16,20]`,
// `[1-9/2]`), the user, the port, IPv6 literals. host_list.h combines items into
// lists (operators, groups, files, exclusions); its header gives the whole syntax.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tpush/util/error.h"

namespace tpush::inventory {

// At most this many hosts come out of the host patterns of one expression or hosts
// file (before duplicates are dropped); more is a UsageError rather than a runaway
// allocation.
inline constexpr std::size_t max_expanded_hosts = 1'000'000;

// The most digits a number in a bracket group (or a step) may have; a name may
// hold longer digit runs, outside brackets.
inline constexpr std::size_t max_range_digits = 18;

// A host part such as "rack[1-2]-node[01-03]": literal pieces and bracket groups;
// its names are their product, leftmost varying slowest. A lower bound written
// with a leading zero sets the width ([01-10] -> 01..10); [1-9/2] steps; blanks in
// brackets are ignored; a group gives each value once. '*' and '?' are ordinary
// characters here.
class HostPattern {
 public:
  // Parses `pattern`, found at offset `at` of `item` (messages quote `item`).
  HostPattern(std::string_view pattern, std::string_view item, std::size_t at = 0);

  // How many names (counted with repeats), at most max_expanded_hosts.
  std::size_t count() const { return count_; }

  // The names in order. Groups that touch (nothing or only digits between them)
  // must not give a name twice: n[1-11][1-11] makes n111 from 1+11 and from 11+1,
  // which is a UsageError, as in nodeset.
  std::vector<std::string> names() const;

 private:
  std::string item_;
  std::vector<std::vector<std::string>> parts_;
  std::size_t count_ = 1;
  // The first two groups that touch: offsets in the item of the first one's ']'
  // and the second one's '['.
  std::optional<std::pair<std::size_t, std::size_t>> touching_;
};

// One item, `[user@]host[:port]`, `[user@][v6addr][:port]` or `[user@]v6addr`.
struct HostItem {
  std::string user;                    // "" when not given
  uint16_t port = 0;                   // 0 when not given
  std::optional<std::string> address;  // an IPv6 address, written in brackets or bare
  std::optional<HostPattern> pattern;  // otherwise the host names
  bool wildcard = false;               // the pattern holds '*' or '?': its names are masks
};

// Parses an item; every malformed part is a UsageError quoting the item.
HostItem parse_host_item(std::string_view item);

// HostSpec.text for a host and port: `host`, `host:port` or `[v6]:port`.
std::string host_text(const std::string& host, uint16_t port);

// "bad host list 'ITEM': DETAIL", the error for a malformed item or list.
UsageError bad_host_list(std::string_view item, const std::string& detail);

// `text` with what does not print escaped (\n, \t, \r, else \xHH per byte:
// control characters, a byte-order mark, bytes that are not UTF-8; see
// util::unprintable_length), so that a message stays one printable line;
// quote_for_message also puts it in single quotes.
std::string escape_for_message(std::string_view text);
std::string quote_for_message(std::string_view text);

// bad_host_list, thrown.
[[noreturn]] void fail_host_list(std::string_view item, const std::string& detail);

// What separates items within a line of a host list (newlines separate lines).
bool is_list_blank(char c);
// `text` without the list blanks around it.
std::string_view trim_blanks(std::string_view text);
// "column N" for a 0-based offset into an item, in messages.
std::string column_text(std::size_t offset);

// Refuses text that cannot name a host (a bad_host_list quoting what is wrong
// and how to fix it): it would go to DNS or ssh_config as it is, or, past a
// NUL, be cut short. Control characters, a byte-order mark, bytes that are not
// UTF-8 and NULs; the list blanks are fine. `file`: the hosts file it came from
// ("" for -w and groups), for the hint.
void check_host_text(std::string_view text, std::string_view file);

}  // namespace tpush::inventory
