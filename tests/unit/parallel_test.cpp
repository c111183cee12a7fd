// The analysis threads: how many a run takes by default (CPU affinity, a cgroup's CPU quota, a
// limit on address space) and parallel_for's going on with the threads that started.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "analyzer/core/parallel.h"

namespace {

struct RefusalGuard {
  explicit RefusalGuard(int n) { tl::refuse_thread_starts_after_for_testing(n); }
  ~RefusalGuard() { tl::refuse_thread_starts_after_for_testing(-1); }
};

TEST(ParallelFor, GoesOnWithTheThreadsThatStarted) {
  for (int allowed : {1, 2, 3}) {
    RefusalGuard guard(allowed);
    std::vector<std::atomic<int>> seen(1000);
    std::atomic<int> threads_seen{0};
    thread_local bool counted = false;
    tl::parallel_for(seen.size(), 8, [&](size_t i) {
      if (!counted) {
        counted = true;
        ++threads_seen;
      }
      ++seen[i];
    });
    for (size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i].load(), 1) << "item " << i << ", " << allowed << " threads";
    EXPECT_LE(threads_seen.load(), allowed);
    EXPECT_GE(threads_seen.load(), 1);
  }
}

TEST(ParallelFor, NoThreadAtAllIsAnError) {
  RefusalGuard guard(0);
  bool ran = false;
  EXPECT_THROW(tl::parallel_for(10, 4, [&](size_t) { ran = true; }), tl::ThreadStartError);
  EXPECT_FALSE(ran);
}

TEST(ParallelFor, LargestFirstGoesOnWithTheThreadsThatStarted) {
  RefusalGuard guard(2);
  std::vector<std::atomic<int>> seen(300);
  tl::parallel_for_largest_first(seen.size(), 16, [](size_t i) { return i % 17; }, [&](size_t i) { ++seen[i]; });
  for (size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i].load(), 1) << "item " << i;
}

TEST(DefaultThreads, ReadsCgroupV2CpuMax) {
  EXPECT_EQ(tl::cpus_of_cpu_max("max 100000\n"), 0u);
  EXPECT_EQ(tl::cpus_of_cpu_max("200000 100000\n"), 2u);
  EXPECT_EQ(tl::cpus_of_cpu_max("150000 100000"), 2u);  // 1.5 CPUs: 2 threads
  EXPECT_EQ(tl::cpus_of_cpu_max("50000 100000"), 1u);
  EXPECT_EQ(tl::cpus_of_cpu_max("100000 100000"), 1u);
  EXPECT_EQ(tl::cpus_of_cpu_max(""), 0u);
  EXPECT_EQ(tl::cpus_of_cpu_max("garbage"), 0u);
  EXPECT_EQ(tl::cpus_of_cpu_max("12x 100000"), 0u);
  EXPECT_EQ(tl::cpus_of_cpu_max("100000 0"), 0u);
}

TEST(DefaultThreads, ReadsCgroupV1Quota) {
  EXPECT_EQ(tl::cpus_of_cfs(-1, 100000), 0u);  // no quota
  EXPECT_EQ(tl::cpus_of_cfs(250000, 100000), 3u);
  EXPECT_EQ(tl::cpus_of_cfs(1000, 100000), 1u);
  EXPECT_EQ(tl::cpus_of_cfs(100000, 0), 0u);
}

TEST(DefaultThreads, StacksStayWithinAnEighthOfTheLimit) {
  const size_t MiB = size_t{1} << 20;
  EXPECT_EQ(tl::threads_within(150000 * size_t{1024}, 4 * MiB), 4u);
  EXPECT_EQ(tl::threads_within(100000 * size_t{1024}, 4 * MiB), 3u);
  EXPECT_EQ(tl::threads_within(1024 * MiB, 16 * MiB), 8u);
  EXPECT_EQ(tl::threads_within(16384 * MiB, 16 * MiB), 128u);
  EXPECT_EQ(tl::threads_within(MiB, 4 * MiB), 1u);  // never none
  EXPECT_EQ(tl::threads_under_limit(0), 1u);
}

TEST(DefaultThreads, AtLeastOneAndNoMoreThanTheMachineHas) {
  unsigned n = tl::default_threads();
  EXPECT_GE(n, 1u);
  EXPECT_LE(n, std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace
