// Host lists as pdsh and clush write them: `alice@node[01-16,20]:2222,^hosts.txt`,
// and hosts files with one such entry per line.
//
// Item syntax (items are separated by top-level commas; empty items are skipped):
//   [user@]host[:port]      port 1-65535; ranges apply to the host part only
//   host[01-04,7]           bracket ranges; several groups form a cartesian product
//                           (leftmost varies slowest); a lower bound written with a
//                           leading zero sets the width: [01-10] -> 01..10
//   [v6addr][:port]         IPv6 in brackets (a bracket group holding ':' at the start
//                           of the host); a bare `2001:db8::5` is an IPv6 host, no port
//   ^FILE                   the hosts of FILE (relative to the working directory),
//                           spliced in at this position
// Every malformed part is a UsageError that quotes the offending item.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string_view>
#include <vector>

#include "tpush/inventory/worker.h"

namespace tpush::inventory {

// At most this many hosts come out of one expression or hosts file (before
// duplicates are dropped); more is a UsageError rather than a runaway allocation.
inline constexpr std::size_t max_expanded_hosts = 1'000'000;

// Expands a host list expression into host specs, in order, duplicates dropped
// (first occurrence kept; identity = user + host + port). An empty or all-blank
// expression gives an empty list. HostSpec.text is `host`, `host:port`, or
// `[v6]:port`, never with the user.
std::vector<HostSpec> expand_host_list(std::string_view expr);

// Parses the text of a hosts file: each line holds one item or expression as
// above; `#` starts a comment; blank lines and surrounding whitespace are ignored.
// Errors read "SOURCE:LINE: <message>". Duplicates are dropped as above.
std::vector<HostSpec> parse_hosts_text(std::string_view text, std::string_view source);

// Reads and parses a hosts file; an unreadable file is a UsageError naming the
// file and the system's reason, and a file that includes itself via ^FILE too.
std::vector<HostSpec> read_hosts_file(const std::filesystem::path& file);

// Removes every host matched by an entry of `excluded`: the host names must be
// equal, and where the exclusion names a user or a port those must be equal too.
// Names are compared exactly (no DNS lookup, no case folding).
std::vector<HostSpec> exclude_hosts(std::vector<HostSpec> hosts,
                                    const std::vector<HostSpec>& excluded);

// Drops duplicates (same user, host and port), keeping the first occurrence.
std::vector<HostSpec> dedup_hosts(std::vector<HostSpec> hosts);

}  // namespace tpush::inventory
