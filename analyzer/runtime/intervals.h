// Interval math for `trainlint run`: pure functions over [start, end) intervals in nanoseconds of
// one clock (CLOCK_MONOTONIC, see docs/runtime-protocol.md). Nothing here reads files or records;
// the merge (measure.cpp) feeds it host intervals (sites, waits, steps) and GPU activity.
//
// Conventions: an interval with end <= start is empty and is dropped by `normalize`; inputs may
// come in any order (CUPTI delivers buffers out of order, streams interleave); a "set" is a sorted
// vector of disjoint, non-touching intervals, the output of `normalize`.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

namespace tl::runtime {

struct Interval {
  int64_t start = 0, end = 0;
  int64_t length() const { return end > start ? end - start : 0; }
  bool operator==(const Interval&) const = default;
};

// Sorts, drops empty intervals and merges overlapping or touching ones: the union as a set.
std::vector<Interval> normalize(std::vector<Interval> v);

// Total length of a set; `union_length` normalises any vector first (overlaps count once).
int64_t total_length(const std::vector<Interval>& set);
int64_t union_length(std::vector<Interval> v);

// How much of `q` the set covers (binary search; O(log n + k)).
int64_t covered(const std::vector<Interval>& set, Interval q);
// How much of `q` the set leaves uncovered: the GPU idle time inside a host interval when `set`
// is the union of GPU activity.
int64_t uncovered(const std::vector<Interval>& set, Interval q);

// GPU idle inside a finding's host intervals: the host intervals are normalised first (nested or
// overlapping calls count once), then idle = their length minus the part GPU activity covers.
int64_t idle_within(const std::vector<Interval>& busy_set, const std::vector<Interval>& host);

// The set's parts inside `window`.
std::vector<Interval> clip(const std::vector<Interval>& set, Interval window);
// Intersection of two sets.
std::vector<Interval> intersect(const std::vector<Interval>& a, const std::vector<Interval>& b);

// Moves every interval by `offset_ns` (device clock -> host clock, once the offset is known).
std::vector<Interval> shift(std::vector<Interval> v, int64_t offset_ns);

// Offset that maps a second clock onto the host clock from paired readings (host_ns, other_ns)
// taken at about the same moment: the median of host - other (robust to a preempted reading).
// 0 when there are no pairs.
int64_t estimate_offset(std::vector<std::pair<int64_t, int64_t>> host_other_pairs);

}  // namespace tl::runtime
