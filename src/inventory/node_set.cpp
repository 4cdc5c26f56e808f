#include "tpush/inventory/node_set.h"

#include <algorithm>
#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tpush/inventory/host_list.h"
#include "tpush/util/error.h"
#include "tpush/util/string.h"

namespace tpush::inventory {
namespace {

using std::string;
using std::string_view;


// nodeset orders the numbers of a range set shorter first, then by text: 9 < 01 < 10.
bool number_less(const string& a, const string& b) {
  return a.size() != b.size() ? a.size() < b.size() : a < b;
}

// A number as written by nodeset's padding rule: `0` is plain, `07` is padded.
bool padded(const string& n) { return n.size() > 1 && n.front() == '0'; }

string_view without_leading_zeros(string_view n) {
  while (n.size() > 1 && n.front() == '0') n.remove_prefix(1);
  return n;
}

// value(b) == value(a) + 1, for digit strings of any length.
bool is_successor(const string& a, const string& b) {
  string next(without_leading_zeros(a));
  std::size_t i = next.size();
  while (i > 0 && next[i - 1] == '9') next[--i] = '0';
  if (i == 0) {
    next.insert(next.begin(), '1');
  } else {
    ++next[i - 1];
  }
  return next == without_leading_zeros(b);
}

// A set of numbers (digit strings) of one position, sorted as nodeset sorts them.
class NumberSet {
 public:
  NumberSet() = default;
  explicit NumberSet(string n) : numbers_{std::move(n)} {}

  // The set of `numbers`, in any order, duplicates allowed.
  static NumberSet of(std::vector<string> numbers) {
    std::sort(numbers.begin(), numbers.end(), number_less);
    numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
    NumberSet out;
    out.numbers_ = std::move(numbers);
    return out;
  }
  std::size_t size() const { return numbers_.size(); }
  const string& front() const { return numbers_.front(); }
  const string& back() const { return numbers_.back(); }

  bool operator==(const NumberSet&) const = default;

  bool disjoint(const NumberSet& other) const {
    auto a = numbers_.begin();
    auto b = other.numbers_.begin();
    while (a != numbers_.end() && b != other.numbers_.end()) {
      if (number_less(*a, *b)) {
        ++a;
      } else if (number_less(*b, *a)) {
        ++b;
      } else {
        return false;
      }
    }
    return true;
  }
  bool includes(const NumberSet& other) const {
    return std::includes(numbers_.begin(), numbers_.end(), other.numbers_.begin(),
                         other.numbers_.end(), number_less);
  }
  NumberSet united(const NumberSet& other) const {
    NumberSet out;
    std::set_union(numbers_.begin(), numbers_.end(), other.numbers_.begin(), other.numbers_.end(),
                   std::back_inserter(out.numbers_), number_less);
    return out;
  }

  // "1-3,5,01-02": runs of consecutive numbers that share nodeset's padding rule
  // (a padded run keeps its width; a plain run takes no padded number).
  string ranges() const {
    string out;
    std::size_t start = 0;
    while (start < numbers_.size()) {
      const string& first = numbers_[start];
      std::size_t end = start + 1;
      while (end < numbers_.size()) {
        const string& next = numbers_[end];
        const bool same_padding =
            padded(first) ? next.size() == first.size() : !padded(next);
        if (!same_padding || !is_successor(numbers_[end - 1], next)) break;
        ++end;
      }
      if (!out.empty()) out += ',';
      out += first;
      if (end - start > 1) out += "-" + numbers_[end - 1];
      start = end;
    }
    return out;
  }

  // As it appears in a node set: bare when it holds one number, else in brackets.
  string folded() const { return size() == 1 ? front() : "[" + ranges() + "]"; }

 private:
  std::vector<string> numbers_;
};

// One product: a NumberSet per number position of the pattern.
using Product = std::vector<NumberSet>;

std::size_t count(const Product& p) {
  std::size_t n = 1;
  for (const auto& set : p) n *= set.size();
  return n;
}

// nodeset's order of products: larger first, then position by position larger
// sets first, then lower first and last numbers (compared as text).
bool product_before(const Product& a, const Product& b) {
  const std::size_t ca = count(a);
  const std::size_t cb = count(b);
  if (ca != cb) return ca > cb;
  for (std::size_t d = 0; d < a.size(); ++d) {
    if (a[d].size() != b[d].size()) return a[d].size() > b[d].size();
    if (a[d].front() != b[d].front()) return a[d].front() < b[d].front();
    if (a[d].back() != b[d].back()) return a[d].back() < b[d].back();
  }
  return false;
}

// Two products that differ in at most one position merge into `merged`; false
// when they cannot (the rule of ClusterShell's RangeSetND._fold_multivariate_merge).
bool try_merge(const Product& a, const Product& b, Product& merged) {
  merged.assign(a.size(), NumberSet{});
  int differences = 0;
  for (std::size_t d = 0; d < a.size(); ++d) {
    if (a[d] == b[d]) {
      merged[d] = a[d];
    } else if (a[d].disjoint(b[d])) {
      if (++differences > 1) return false;
      merged[d] = a[d].united(b[d]);
    } else if (a[d].includes(b[d]) || b[d].includes(a[d])) {
      if (++differences > 1) return false;
      merged[d] = a[d].includes(b[d]) ? a[d] : b[d];
    } else {
      return false;  // overlapping: nodeset leaves these apart
    }
  }
  return true;
}

// ClusterShell's multivariate fold, step for step, so that the products and their
// order are the ones `nodeset -f` prints: start from single points, then merge
// neighbours in cheap passes, and finish with full pairwise passes until nothing
// changes. The sort is stable, like Python's.
std::vector<Product> merge_products(std::vector<Product> list) {
  bool full = false;
  bool changed = true;
  Product merged;
  while (changed) {
    changed = false;
    std::stable_sort(list.begin(), list.end(), product_before);
    std::size_t first = 0;
    while (first + 1 < list.size()) {
      std::size_t second = first + 1;
      ++first;
      while (second < list.size()) {
        if (try_merge(list[first - 1], list[second], merged)) {
          changed = true;
          list[first - 1] = std::move(merged);
          list.erase(list.begin() + static_cast<std::ptrdiff_t>(second));
        } else if (!full) {
          break;
        } else {
          ++second;
        }
      }
    }
    if (!changed && !full) changed = full = true;
  }
  return list;
}

// Labels that share a pattern: the literal pieces around the numbers, and the
// numbers of each label.
struct Pattern {
  std::vector<string> pieces;  // one more than the numbers
  std::set<std::vector<string>> points;
};

std::vector<Product> fold_points(const std::set<std::vector<string>>& points) {
  const std::size_t dims = points.begin()->size();
  Product all(dims);
  std::size_t varying = 0;
  for (std::size_t d = 0; d < dims; ++d) {
    std::vector<string> numbers;
    numbers.reserve(points.size());
    for (const auto& p : points) numbers.push_back(p[d]);
    all[d] = NumberSet::of(std::move(numbers));
    if (all[d].size() > 1) ++varying;
  }
  // Only one position varies: nodeset's univariate fold, one product.
  if (varying <= 1) return {std::move(all)};
  std::vector<Product> singles;
  singles.reserve(points.size());
  for (const auto& p : points) {
    Product single;
    single.reserve(dims);
    for (const auto& n : p) single.emplace_back(n);
    singles.push_back(std::move(single));
  }
  return merge_products(std::move(singles));
}

string render(const Pattern& pattern) {
  if (pattern.pieces.size() == 1) return pattern.pieces.front();
  string out;
  for (const auto& product : fold_points(pattern.points)) {
    if (!out.empty()) out += ',';
    for (std::size_t d = 0; d < product.size(); ++d) out += pattern.pieces[d] + product[d].folded();
    out += pattern.pieces.back();
  }
  return out;
}

// A label that folds: its host part split at digit runs, and a literal `:port`.
void split_label(string_view label, string& key, Pattern& shape, std::vector<string>& numbers) {
  string_view host = label;
  string_view port;
  if (const auto colon = label.find(':'); colon != string_view::npos) {
    host = label.substr(0, colon);
    port = label.substr(colon);
  }
  shape.pieces.assign(1, string());
  numbers.clear();
  key.clear();
  std::size_t i = 0;
  while (i < host.size()) {
    if (!util::is_digit(host[i])) {
      shape.pieces.back() += host[i];
      key += host[i] == '%' ? string("%%") : string(1, host[i]);
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < host.size() && util::is_digit(host[end])) ++end;
    if (end - i > max_range_digits) {
      // Too long for a bracket group, which could not be read back: literal.
      shape.pieces.back() += host.substr(i, end - i);
      key += host.substr(i, end - i);
      i = end;
      continue;
    }
    numbers.emplace_back(host.substr(i, end - i));
    shape.pieces.emplace_back();
    key += "%s";
    i = end;
  }
  shape.pieces.back() += port;
  for (char c : port) key += c == '%' ? string("%%") : string(1, c);
}

bool is_ipv6_label(string_view label) {
  return label.front() == '[' || std::count(label.begin(), label.end(), ':') > 1;
}

}  // namespace

bool host_list_expresses(string_view label) {
  if (label.empty()) return false;
  // Characters that mean something else to the parser (separators, operators,
  // wildcards, users), and a leading exclusion, filter or comment mark...
  for (char c : label) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f) return false;
    if (string_view(",@!&^*?").find(c) != string_view::npos) return false;
  }
  // (and nothing that would make the parser read a file: ^FILE, #include)
  if (label.front() == '-' || label.front() == '/' || label.front() == '#') return false;
  try {
    const auto hosts = expand_host_list(label);
    return hosts.size() == 1 && hosts.front().user.empty() && hosts.front().text == label;
  } catch (const UsageError&) {
    return false;
  }
}

string fold_node_set(const std::vector<string>& labels) {
  std::map<string, Pattern> patterns;  // by nodeset's pattern text
  string key;
  Pattern shape;
  std::vector<string> numbers;
  for (const string& label : std::set<string>(labels.begin(), labels.end())) {
    if (label.empty()) continue;
    if (!host_list_expresses(label) || is_ipv6_label(label)) {
      // Listed whole: its own pattern without numbers.
      key.clear();
      for (char c : label) key += c == '%' ? string("%%") : string(1, c);
      patterns[key].pieces.assign(1, label);
      continue;
    }
    split_label(label, key, shape, numbers);
    auto [it, inserted] = patterns.try_emplace(key);
    if (inserted) it->second.pieces = shape.pieces;
    it->second.points.insert(numbers);
  }
  string out;
  for (const auto& [text, pattern] : patterns) {
    if (!out.empty()) out += ',';
    out += render(pattern);
  }
  return out;
}

}  // namespace tpush::inventory
