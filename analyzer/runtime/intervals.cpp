#include "analyzer/runtime/intervals.h"

#include <algorithm>

namespace tl::runtime {

std::vector<Interval> normalize(std::vector<Interval> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](const Interval& i) { return i.end <= i.start; }), v.end());
  std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) {
    return a.start != b.start ? a.start < b.start : a.end < b.end;
  });
  std::vector<Interval> out;
  out.reserve(v.size());
  for (auto& i : v) {
    if (!out.empty() && i.start <= out.back().end) out.back().end = std::max(out.back().end, i.end);
    else out.push_back(i);
  }
  return out;
}

int64_t total_length(const std::vector<Interval>& set) {
  int64_t t = 0;
  for (auto& i : set) t += i.length();
  return t;
}

int64_t union_length(std::vector<Interval> v) { return total_length(normalize(std::move(v))); }

int64_t covered(const std::vector<Interval>& set, Interval q) {
  if (q.end <= q.start || set.empty()) return 0;
  // first interval whose end is after q.start
  auto it = std::upper_bound(set.begin(), set.end(), q.start,
                             [](int64_t t, const Interval& i) { return t < i.end; });
  int64_t c = 0;
  for (; it != set.end() && it->start < q.end; ++it) {
    int64_t s = std::max(it->start, q.start), e = std::min(it->end, q.end);
    if (e > s) c += e - s;
  }
  return c;
}

int64_t uncovered(const std::vector<Interval>& set, Interval q) { return q.length() - covered(set, q); }

int64_t idle_within(const std::vector<Interval>& busy_set, const std::vector<Interval>& host) {
  int64_t idle = 0;
  for (auto& q : normalize(host)) idle += uncovered(busy_set, q);
  return idle;
}

std::vector<Interval> clip(const std::vector<Interval>& set, Interval window) {
  std::vector<Interval> out;
  for (auto& i : set) {
    int64_t s = std::max(i.start, window.start), e = std::min(i.end, window.end);
    if (e > s) out.push_back({s, e});
  }
  return out;
}

std::vector<Interval> intersect(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::vector<Interval> out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    int64_t s = std::max(a[i].start, b[j].start), e = std::min(a[i].end, b[j].end);
    if (e > s) out.push_back({s, e});
    if (a[i].end < b[j].end) ++i;
    else ++j;
  }
  return out;
}

std::vector<Interval> shift(std::vector<Interval> v, int64_t offset_ns) {
  for (auto& i : v) {
    i.start += offset_ns;
    i.end += offset_ns;
  }
  return v;
}

int64_t estimate_offset(std::vector<std::pair<int64_t, int64_t>> pairs) {
  if (pairs.empty()) return 0;
  std::vector<int64_t> d;
  d.reserve(pairs.size());
  for (auto& [h, o] : pairs) d.push_back(h - o);
  std::sort(d.begin(), d.end());
  size_t n = d.size();
  if (n % 2) return d[n / 2];
  // the mean of the two middle values, without overflow
  int64_t a = d[n / 2 - 1], b = d[n / 2];
  return a + (b - a) / 2;
}

}  // namespace tl::runtime
