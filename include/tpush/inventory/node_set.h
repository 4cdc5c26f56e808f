// Folding worker labels into a node set, the way ClusterShell's `nodeset -f` writes
// one: `w[0-3,5-7]`, `node[01-16]`, `s[0-1]w[0-3]`, `127.0.1.[1-12]:2222`. It is the
// inverse of the host-list parser (host_list.h) and names groups of workers in
// `tpush -b` headers.
//
// How a label folds:
//   * Every run of digits is a number; labels that differ only in their numbers
//     share a pattern (`s%sw%s` for `s1w3`) and fold together. Numbers keep their
//     padding: `01` and `1` are different numbers, as in nodeset. A run of more
//     than 18 digits (max_range_digits, too long for a bracket group) is literal
//     text, where nodeset would fold it.
//   * One number per pattern folds into ranges: `n[1-3,5]`. Several numbers fold
//     the way nodeset does: a set that varies in one position folds into one
//     product (`s0w[0-3]`); otherwise nodeset's greedy pairwise merge gives a
//     list of products (`s[0-1]w[0-3],s2w[0-1]`).
//   * A `:port` suffix stays literal and never folds (nodeset would write
//     `h:[22-23]`, which the host-list parser refuses: ranges apply to the host
//     part only). Labels with different ports are different patterns.
//   * IPv6 labels (`2001:db8::5`, `[fe80::1]:22`) are listed whole: a range next to
//     `::` does not parse.
//   * A label that host-list syntax cannot express (whitespace, control characters,
//     `,` `@` `!` `&` `^` `*` `?` `#`, brackets outside `[v6]:port`, a bad port, a
//     leading `-` or `/`) is listed verbatim; such a result does not parse back.
//     Empty labels are dropped.
//
// Order: patterns in byte order of nodeset's pattern text (each number replaced by
// `%s`, a literal `%` doubled), so `n5` < `n12:22` < `node3` < `w1` and all-digit
// names first; within a pattern, numbers ascend, shorter before longer (`9` < `01`
// < `10`), and products in nodeset's order. The result depends only on the set of
// labels: input order and duplicates do not matter.
//
// Round trip: for labels that host-list syntax expresses, expand_host_list() of the
// result gives exactly the labels again (as HostSpec.text).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tpush::inventory {

// The folded node set of `labels`, comma-separated; "" for no labels.
std::string fold_node_set(const std::vector<std::string>& labels);

// True if expand_host_list(label) gives back exactly one host whose text is
// `label` (with no user), so the label can take part in a fold.
bool host_list_expresses(std::string_view label);

}  // namespace tpush::inventory
