#include "tpush/output/unified_diff.h"

#include <algorithm>
#include <climits>
#include <functional>
#include <span>
#include <vector>

namespace tpush::output {
namespace {

// One line, its '\n' included: "b" at the end of a text without a final
// newline is not the line "b\n" (diff -u sees them differ, and says so).
struct DiffLine {
  std::string_view text;
  std::size_t hash;  // compared first: most lines that differ differ here
};

std::vector<DiffLine> split_diff_lines(std::string_view text) {
  std::vector<DiffLine> lines;
  const std::hash<std::string_view> hash;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t nl = text.find('\n', at);
    const std::size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    const std::string_view line = text.substr(at, end - at);
    lines.push_back({line, hash(line)});
    at = end;
  }
  return lines;
}

// The shortest edit script from `a` to `b` as two sets of marks, the lines of
// `a` deleted and the lines of `b` inserted; the lines left unmarked match in
// order. Myers' bisection: find the middle snake of a shortest path by searching
// from both corners at once, then solve the two halves the same way. Memory is
// two vectors of diagonals, O(N+M); time O((N+M)D) for D differences, bounded
// by the work limit (past it, a part left to compare is marked deleted and
// inserted whole).
class ShortestEdit {
 public:
  ShortestEdit(std::span<const DiffLine> a, std::span<const DiffLine> b, std::uint64_t work_limit)
      : a_(a),
        b_(b),
        deleted_(a.size()),
        inserted_(b.size()),
        offset_(static_cast<long>(b.size()) + 1),
        forward_(a.size() + b.size() + 3),
        backward_(a.size() + b.size() + 3),
        limit_(work_limit) {
    compare(0, static_cast<long>(a.size()), 0, static_cast<long>(b.size()));
  }

  const std::vector<char>& deleted() const { return deleted_; }
  const std::vector<char>& inserted() const { return inserted_; }
  bool shortest() const { return shortest_; }

 private:
  struct Point {
    long x, y;
  };

  bool same(long x, long y) const {
    const DiffLine& l = a_[static_cast<std::size_t>(x)];
    const DiffLine& r = b_[static_cast<std::size_t>(y)];
    return l.hash == r.hash && l.text == r.text;
  }
  // The furthest x reached on diagonal k (= x - y), searching forward / backward.
  long& fd(long k) { return forward_[static_cast<std::size_t>(k + offset_)]; }
  long& bd(long k) { return backward_[static_cast<std::size_t>(k + offset_)]; }

  // a[xoff, xlim) against b[yoff, ylim) (GNU diff's compareseq).
  void compare(long xoff, long xlim, long yoff, long ylim) {
    while (xoff < xlim && yoff < ylim && same(xoff, yoff)) ++xoff, ++yoff;
    while (xoff < xlim && yoff < ylim && same(xlim - 1, ylim - 1)) --xlim, --ylim;
    Point mid{};
    if (xoff == xlim || yoff == ylim || !middle_snake(xoff, xlim, yoff, ylim, mid)) {
      if (xoff != xlim && yoff != ylim) shortest_ = false;  // out of work: replace it whole
      std::fill(deleted_.begin() + xoff, deleted_.begin() + xlim, 1);
      std::fill(inserted_.begin() + yoff, inserted_.begin() + ylim, 1);
      return;
    }
    // Both halves are smaller: ends without a common line take one delete and
    // one insert at least, so the middle lies strictly inside.
    compare(xoff, mid.x, yoff, mid.y);
    compare(mid.x, xlim, mid.y, ylim);
  }

  // A point on a shortest path through the box, where the searches from both
  // corners meet (GNU diff's diag() without its heuristics); false when the
  // work limit is reached first. The box's first and last lines differ.
  bool middle_snake(long xoff, long xlim, long yoff, long ylim, Point& mid) {
    const long dmin = xoff - ylim, dmax = xlim - yoff;  // the diagonals in the box
    const long fmid = xoff - yoff, bmid = xlim - ylim;  // where each search starts
    long fmin = fmid, fmax = fmid, bmin = bmid, bmax = bmid;
    const bool odd = ((fmid - bmid) & 1) != 0;
    fd(fmid) = xoff;
    bd(bmid) = xlim;
    while (work_ <= limit_) {
      // One more edit forward, on every diagonal it can reach (each second one).
      if (fmin > dmin) fd(--fmin - 1) = -1; else ++fmin;
      if (fmax < dmax) fd(++fmax + 1) = -1; else --fmax;
      for (long k = fmax; k >= fmin; k -= 2) {
        const long lo = fd(k - 1), hi = fd(k + 1);
        const long x0 = lo < hi ? hi : lo + 1;
        long x = x0, y = x0 - k;
        while (x < xlim && y < ylim && same(x, y)) ++x, ++y;
        work_ += static_cast<std::uint64_t>(x - x0) + 1;
        fd(k) = x;
        if (odd && bmin <= k && k <= bmax && bd(k) <= x) {
          mid = {x, y};
          return true;
        }
      }
      // And one more backward.
      if (bmin > dmin) bd(--bmin - 1) = LONG_MAX; else ++bmin;
      if (bmax < dmax) bd(++bmax + 1) = LONG_MAX; else --bmax;
      for (long k = bmax; k >= bmin; k -= 2) {
        const long lo = bd(k - 1), hi = bd(k + 1);
        const long x0 = lo < hi ? lo : hi - 1;
        long x = x0, y = x0 - k;
        while (xoff < x && yoff < y && same(x - 1, y - 1)) --x, --y;
        work_ += static_cast<std::uint64_t>(x0 - x) + 1;
        bd(k) = x;
        if (!odd && fmin <= k && k <= fmax && x <= fd(k)) {
          mid = {x, y};
          return true;
        }
      }
    }
    return false;
  }

  std::span<const DiffLine> a_, b_;
  std::vector<char> deleted_, inserted_;
  long offset_;  // diagonals run from -(|b|+1) to |a|+1
  std::vector<long> forward_, backward_;
  std::uint64_t limit_;
  std::uint64_t work_ = 0;
  bool shortest_ = true;
};

// One change: `deleted` lines of a from line `a` on, replaced by `inserted`
// lines of b from line `b` on (0-based). Between two changes, lines match.
struct DiffChange {
  std::size_t a, deleted, b, inserted;
};

std::vector<DiffChange> diff_changes(const std::vector<char>& deleted, const std::vector<char>& inserted) {
  std::vector<DiffChange> out;
  std::size_t i = 0, j = 0;
  while (i < deleted.size() || j < inserted.size()) {
    if (i < deleted.size() && j < inserted.size() && !deleted[i] && !inserted[j]) {
      ++i, ++j;
      continue;
    }
    DiffChange c{i, 0, j, 0};
    for (; i < deleted.size() && deleted[i]; ++i) ++c.deleted;
    for (; j < inserted.size() && inserted[j]; ++j) ++c.inserted;
    if (c.deleted == 0 && c.inserted == 0) break;  // unmatched unmarked lines: cannot happen
    out.push_back(c);
  }
  return out;
}

// "-a,b" as diff -u writes a range: one line is "a"; no lines, "l,0" with l the
// line before (so an empty side reads "-0,0", which `patch` expects).
std::string hunk_range(char sign, std::size_t start, std::size_t count) {
  std::string out(1, sign);
  if (count == 0) return out + std::to_string(start) + ",0";
  out += std::to_string(start + 1);
  return count == 1 ? out : out + "," + std::to_string(count);
}

class HunkWriter {
 public:
  HunkWriter(const std::vector<DiffLine>& a, const std::vector<DiffLine>& b, const DiffOptions& options)
      : a_(a), b_(b), options_(options) {}

  // The hunk of changes[first..last] (their gaps are short enough to share it).
  void write(const std::vector<DiffChange>& changes, std::size_t first, std::size_t last, std::string& out) const {
    const std::size_t ctx = options_.context;
    const DiffChange& head = changes[first];
    const DiffChange& tail = changes[last];
    const std::size_t before = std::min(ctx, head.a);  // head.a - before >= the previous hunk's end
    const std::size_t a_start = head.a - before, b_start = head.b - before;
    const std::size_t after = std::min(ctx, a_.size() - (tail.a + tail.deleted));
    const std::size_t a_end = tail.a + tail.deleted + after, b_end = tail.b + tail.inserted + after;
    out += "@@ " + hunk_range('-', a_start, a_end - a_start) + " " + hunk_range('+', b_start, b_end - b_start) + " @@\n";
    std::size_t i = a_start;
    for (std::size_t c = first; c <= last; ++c) {
      for (; i < changes[c].a; ++i) line(' ', a_[i], out);
      for (std::size_t k = 0; k < changes[c].deleted; ++k) line('-', a_[i++], out);
      for (std::size_t k = 0; k < changes[c].inserted; ++k) line('+', b_[changes[c].b + k], out);
    }
    for (; i < a_end; ++i) line(' ', a_[i], out);
  }

 private:
  void line(char mark, const DiffLine& l, std::string& out) const {
    out += mark;
    const bool newline = !l.text.empty() && l.text.back() == '\n';
    const std::string_view text = newline ? l.text.substr(0, l.text.size() - 1) : l.text;
    if (options_.append_line) options_.append_line(out, text);
    else out += text;
    out += newline ? "\n" : "\n\\ No newline at end of file\n";
  }

  const std::vector<DiffLine>& a_;
  const std::vector<DiffLine>& b_;
  const DiffOptions& options_;
};

}  // namespace

UnifiedDiff unified_diff(std::string_view from, std::string_view to, const DiffOptions& options) {
  const std::vector<DiffLine> a = split_diff_lines(from), b = split_diff_lines(to);
  const std::uint64_t limit = options.work_limit ? options.work_limit : 64 * (a.size() + b.size()) + 4'000'000;

  // The common head and tail cost nothing to find; only the middle is searched.
  std::size_t head = 0, tail = 0;
  while (head < a.size() && head < b.size() && a[head].text == b[head].text) ++head;
  while (tail < a.size() - head && tail < b.size() - head &&
         a[a.size() - 1 - tail].text == b[b.size() - 1 - tail].text)
    ++tail;
  const ShortestEdit edit(std::span<const DiffLine>(a).subspan(head, a.size() - head - tail),
                          std::span<const DiffLine>(b).subspan(head, b.size() - head - tail), limit);
  std::vector<char> deleted(a.size()), inserted(b.size());
  std::copy(edit.deleted().begin(), edit.deleted().end(), deleted.begin() + static_cast<long>(head));
  std::copy(edit.inserted().begin(), edit.inserted().end(), inserted.begin() + static_cast<long>(head));

  const std::vector<DiffChange> changes = diff_changes(deleted, inserted);
  UnifiedDiff out;
  out.shortest = edit.shortest();
  const HunkWriter writer(a, b, options);
  const std::size_t merge_gap = 2 * options.context;  // up to this many matching lines: one hunk (as diff -u)
  for (std::size_t first = 0; first < changes.size();) {
    std::size_t last = first;
    while (last + 1 < changes.size() &&
           changes[last + 1].a - (changes[last].a + changes[last].deleted) <= merge_gap)
      ++last;
    writer.write(changes, first, last, out.hunks);
    first = last + 1;
  }
  return out;
}

}  // namespace tpush::output
