// Host lists as pdsh and clush users write them: `alice@node[01-16,20]:2222,^hosts.txt`,
// `@rack1!node3`, `node[1-9],-node5`, and hosts files with one such list per line.
//
// (host_pattern.h parses one item; this file combines them; hosts_file.h reads the
// files; host_set.h holds the hosts without duplicates, and exclude_hosts and
// dedup_hosts; host_filter.h compiles /REGEX/.)
//
// Items are separated by commas, blanks or newlines (so `-w "$(cat hosts)"` works);
// empty items are skipped; `#` at the start of an item (of the line, or after a
// blank or a comma) starts a comment to the end of the line, in an expression as in
// a hosts file; inside a name it is part of the name (`gpu-#4`, as nodeset and
// pdsh -w keep it); a name cannot start with it. Text no host name can hold is an
// error quoting it escaped: control characters, a byte-order mark, bytes that are
// not UTF-8, and in a hosts file a NUL anywhere on a line. An item is one of
//   [user@]host[:port]      port 1-65535; ranges apply to the host part only
//   host[01-04,7]           bracket ranges; several groups form a cartesian product
//                           (leftmost varies slowest); a lower bound written with a
//                           leading zero sets the width: [01-10] -> 01..10;
//                           [1-9/2] steps: 1,3,5,7,9; blanks inside brackets are
//                           ignored. Groups that touch (`n[1-11][1-11]`, or with only
//                           digits between) must not give a name twice (n111 would be
//                           1+11 and 11+1): that is an error, as in nodeset
//   [v6addr][:port]         IPv6 in brackets (a bracket group holding ':' at the start
//                           of the host); a bare `2001:db8::5` is an IPv6 host, no port
//   ^FILE                   the hosts of FILE (relative to the working directory; the
//                           name runs to the next comma or blank), spliced in here
//   @group  @source:group   a named group (host_groups.h), `@rack[1-3]` for several;
//                           `@*` (or `@source:*`) is the group `all`
//   n*1  node?              wildcards (`*` any text, `?` one character) select hosts
//                           of the group `all` by name
//   -ITEM                   pdsh's exclusion: ITEM (a host pattern, @group, ^FILE or
//                           wildcard) is removed from the whole list
//   /REGEX/  -/REGEX/       pdsh's filters: keep only (or drop) the hosts whose name
//                           matches the POSIX extended regular expression
// Items combine with ClusterShell's operators, evaluated left to right on everything
// before them on the line (commas and blanks add): `a,b!c` is (a+b) without c,
// `a&b` the hosts in both, `a^b` those in exactly one. Blanks may surround an
// operator; `^` right after a comma, a blank or the start is ^FILE. Where an
// operand names a user or a port, those must match too (as for exclusions).
// Exclusions and filters apply after everything else, to the list they appear in:
// a hosts file, a group, or (in select_hosts) all of -w and -H together.
//
// A hosts file is read the same way, one line at a time. pdsh's `#include FILE` in
// the first column reads FILE (relative to the including file's directory unless it
// starts with / ./ or ../; in an expression, relative to the working directory).
// Every malformed part is a UsageError that quotes the offending item with control
// characters escaped, and says how to write it.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "tpush/inventory/host_groups.h"
#include "tpush/inventory/host_pattern.h"
#include "tpush/inventory/host_set.h"
#include "tpush/inventory/worker.h"

namespace tpush::inventory {

struct HostListOptions {
  // Resolves @group, @* and wildcards; without one they are errors.
  const GroupSource* groups = nullptr;
  // Without groups: where they would come from, for messages.
  std::string no_groups_hint;
};

// Expands a host list expression into host specs, in order, duplicates dropped
// (first occurrence kept; identity = user + host + port). An empty or all-blank
// expression gives an empty list. HostSpec.text is `host`, `host:port`, or
// `[v6]:port`, never with the user.
std::vector<HostSpec> expand_host_list(std::string_view expr, const HostListOptions& options = {});

// Parses the text of a hosts file: each line holds a host list as above; `#` starts
// a comment. Errors read "SOURCE:LINE: <message>". Duplicates are dropped as above.
std::vector<HostSpec> parse_hosts_text(std::string_view text, std::string_view source,
                                       const HostListOptions& options = {});

// Reads and parses a hosts file; an unreadable file is a UsageError naming the
// file and the system's reason, and a file that includes itself via ^FILE too.
std::vector<HostSpec> read_hosts_file(const std::filesystem::path& file,
                                      const HostListOptions& options = {});

// The hosts of the -w expressions and -H files, in that order, minus the -x
// expressions, as pdsh combines them: exclusions (`-ITEM`) and filters (`/REGEX/`)
// in any -w apply to all of them, an -x list excludes what it names (`-x /REGEX/`
// drops the matches). Duplicates dropped.
std::vector<HostSpec> select_hosts(const std::vector<std::string>& exprs,
                                   const std::vector<std::string>& files,
                                   const std::vector<std::string>& excludes,
                                   const HostListOptions& options = {});

}  // namespace tpush::inventory
