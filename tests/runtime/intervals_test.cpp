// Interval math of `trainlint run` (analyzer/runtime/intervals.h) on synthetic activity: GPU
// kernels overlapping on several streams, host intervals with no GPU work, buffers delivered out
// of order, and a device clock that has to be moved onto the host clock.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "analyzer/runtime/intervals.h"

using tl::runtime::Interval;
namespace rt = tl::runtime;

namespace {

std::vector<Interval> shuffled(std::vector<Interval> v, unsigned seed) {
  std::mt19937 g(seed);
  std::shuffle(v.begin(), v.end(), g);
  return v;
}

}  // namespace

TEST(IntervalsNormalize, SortsMergesAndDropsEmpty) {
  auto s = rt::normalize({{50, 60}, {10, 20}, {15, 30}, {30, 35}, {40, 40}, {45, 41}, {70, 80}});
  // {10,20}+{15,30}+{30,35} merge (touching counts), {40,40} and {45,41} are empty
  std::vector<Interval> want = {{10, 35}, {50, 60}, {70, 80}};
  EXPECT_EQ(s, want);
  EXPECT_EQ(rt::total_length(s), 25 + 10 + 10);
  EXPECT_TRUE(rt::normalize({}).empty());
  EXPECT_EQ(rt::union_length({{0, 10}, {0, 10}, {5, 15}}), 15);
}

TEST(IntervalsCovered, PartialAndOutside) {
  auto set = rt::normalize({{10, 20}, {30, 40}, {50, 60}});
  EXPECT_EQ(rt::covered(set, {0, 5}), 0);     // before everything
  EXPECT_EQ(rt::covered(set, {70, 90}), 0);   // after everything
  EXPECT_EQ(rt::covered(set, {20, 30}), 0);   // exactly in a gap
  EXPECT_EQ(rt::covered(set, {15, 35}), 10);  // half of two
  EXPECT_EQ(rt::covered(set, {0, 100}), 30);
  EXPECT_EQ(rt::covered(set, {12, 18}), 6);   // inside one
  EXPECT_EQ(rt::covered(set, {18, 12}), 0);   // an inverted query is empty
  EXPECT_EQ(rt::uncovered(set, {0, 100}), 70);
}

// Three streams: kernels overlap across streams (and a memcpy overlaps a kernel). The GPU is busy
// when any stream is: idle inside a host interval is what the union leaves uncovered.
TEST(IntervalsGpuIdle, OverlappingKernelsOnSeveralStreams) {
  std::vector<Interval> stream7 = {{100, 200}, {250, 300}};
  std::vector<Interval> stream13 = {{150, 260}, {400, 450}};
  std::vector<Interval> stream14_memcpy = {{440, 500}};
  std::vector<Interval> all;
  for (auto* v : {&stream7, &stream13, &stream14_memcpy}) all.insert(all.end(), v->begin(), v->end());
  auto busy = rt::normalize(all);
  std::vector<Interval> want = {{100, 300}, {400, 500}};
  EXPECT_EQ(busy, want);
  // a host interval [50, 550): busy 200 + 100, idle 200
  EXPECT_EQ(rt::idle_within(busy, {{50, 550}}), 200);
  // two calls of a site, one over the first burst, one in the gap
  EXPECT_EQ(rt::idle_within(busy, {{180, 320}, {320, 390}}), 20 + 70);
  // overlapping (nested) host intervals count once
  EXPECT_EQ(rt::idle_within(busy, {{300, 400}, {320, 380}}), 100);
  // the sum over streams would double count: the union does not
  int64_t naive = 0;
  for (auto& i : all) naive += i.length();
  EXPECT_GT(naive, rt::total_length(busy));
}

TEST(IntervalsGpuIdle, HostIntervalsWithNoGpuWork) {
  auto busy = rt::normalize({{1000, 2000}});
  EXPECT_EQ(rt::idle_within(busy, {{0, 500}, {2500, 3000}}), 1000);  // all idle
  EXPECT_EQ(rt::idle_within({}, {{0, 500}}), 500);                  // no GPU record at all
  EXPECT_EQ(rt::idle_within(busy, {}), 0);                           // no host interval
  EXPECT_EQ(rt::idle_within(busy, {{1200, 1800}}), 0);               // all busy
}

// CUPTI hands buffers back out of order; the answer must not depend on the order.
TEST(IntervalsGpuIdle, UnorderedBuffers) {
  std::vector<Interval> kernels;
  for (int64_t i = 0; i < 200; ++i) kernels.push_back({i * 100, i * 100 + 60 + (i % 3) * 30});  // some overlap the next
  auto ref = rt::normalize(kernels);
  std::vector<Interval> host = {{-500, 2550}, {7000, 7777}, {19990, 20500}};
  int64_t ref_idle = rt::idle_within(ref, host);
  for (unsigned seed = 1; seed <= 5; ++seed) {
    auto busy = rt::normalize(shuffled(kernels, seed));
    EXPECT_EQ(busy, ref);
    EXPECT_EQ(rt::idle_within(busy, shuffled(host, seed)), ref_idle);
  }
  // by hand: in [0, 2550) the kernels cover 0-60, 100-190, 200-320 (merges with 300-360), ...
  EXPECT_EQ(rt::covered(ref, {0, 100}), 60);
  EXPECT_EQ(rt::covered(ref, {-500, 0}), 0);
}

// A device clock 1 s ahead of the host clock: once the offset is estimated from paired readings
// and applied, GPU work lands inside the host interval that launched it.
TEST(IntervalsClock, OffsetEstimateAndShift) {
  const int64_t offset = -1'000'000'000;  // host = device - 1 s
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (int64_t k = 0; k < 9; ++k) pairs.push_back({5'000 + k * 1'000, 5'000 + k * 1'000 - offset + (k % 2 ? 3 : -3)});
  pairs.push_back({99'000, 99'000 - offset + 50'000});  // one preempted reading: the median ignores it
  EXPECT_NEAR(static_cast<double>(rt::estimate_offset(pairs)), static_cast<double>(offset), 3.0);
  EXPECT_EQ(rt::estimate_offset({}), 0);
  EXPECT_EQ(rt::estimate_offset({{10, 4}, {10, 6}}), 5);  // even count: mean of the middle two

  std::vector<Interval> device_kernels = {{1'000'010'000, 1'000'030'000}};
  std::vector<Interval> host_call = {{5'000, 40'000}};
  // unaligned, the kernel seems to run far outside the call: all idle
  EXPECT_EQ(rt::idle_within(rt::normalize(device_kernels), host_call), 35'000);
  auto aligned = rt::normalize(rt::shift(device_kernels, rt::estimate_offset(pairs)));
  int64_t idle = rt::idle_within(aligned, host_call);
  EXPECT_NEAR(static_cast<double>(idle), 15'000.0, 6.0);
}

TEST(IntervalsSets, ClipAndIntersect) {
  auto a = rt::normalize({{0, 10}, {20, 30}, {40, 50}});
  auto b = rt::normalize({{5, 25}, {45, 60}});
  std::vector<Interval> want = {{5, 10}, {20, 25}, {45, 50}};
  EXPECT_EQ(rt::intersect(a, b), want);
  std::vector<Interval> clipped = {{8, 10}, {20, 30}, {40, 42}};
  EXPECT_EQ(rt::clip(a, {8, 42}), clipped);
  EXPECT_TRUE(rt::clip(a, {11, 19}).empty());
}
