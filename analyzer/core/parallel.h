// Threads for the analysis: every walk over a syntax tree is recursive, and its depth follows the
// nesting of the code it is given (generated code nests thousands deep). The analysis therefore
// runs on threads of its own with a large stack (kAnalysisStackBytes, reserved address space that
// is committed only as it is touched), never on the caller's thread, whose stack may be the 8 MB
// of a process's main thread or less, and sanitizers make every frame several times larger.
//
// parallel_for: runs fn(0..n-1) on up to `threads` such threads pulling indices from a shared
// counter (work items differ a lot in size: files, programs).
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <string_view>
#include <vector>

namespace tl {

inline constexpr size_t kAnalysisStackBytes = size_t{256} << 20;
// The stack each AnalysisThread asks for: kAnalysisStackBytes, or under a limit on address space
// (`ulimit -v`), where every thread's stack is counted whole against that limit, a 64th of the
// limit, at least 4 MiB and at most 16 MiB (sanitizer builds, which need the large default, do
// not run under such a limit). The walks bound their own depth (analyzer/python/collect.cpp's
// kMaxDepth and the like): the 5,000-deep stress files need under 1 MiB in a release build; the
// large default is for sanitizer builds, whose frames are several times larger.
size_t analysis_stack_bytes();

// The threads a run uses when -j is not given: the CPUs this process may run on (its affinity
// mask, as `taskset` and container cpusets set it), fewer where a cgroup's CPU quota allows less
// (`docker --cpus 2`, a CI runner's limit: cgroup v2 `cpu.max` or v1 `cpu.cfs_quota_us`, rounded
// up), and, under a limit on address space, no more threads than keep their stacks within an
// eighth of it. At least 1. Worked out once.
unsigned default_threads();
// The parts of default_threads(), for tests: the quota of a cgroup v2 `cpu.max` text ("max
// 100000", "150000 100000") or of v1's quota and period, in CPUs rounded up; 0 for no limit or an
// unreadable text.
unsigned cpus_of_cpu_max(std::string_view text);
unsigned cpus_of_cfs(long long quota_us, long long period_us);
// The most threads whose stacks (analysis_stack_bytes() each) fit in an eighth of `limit`.
unsigned threads_within(size_t limit, size_t stack_bytes);
// `requested` threads (-j), fewer under a limit on address space where their stacks would take
// more than an eighth of it (-j 16 under `ulimit -v 150M`: 16 stacks of 4 MiB, 43% of the
// limit, and the run ran out of memory where -j 4 completes).
unsigned threads_under_limit(unsigned requested);

// Thrown where not even one analysis thread can be started (threads or memory exhausted).
struct ThreadStartError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A joinable thread whose stack is kAnalysisStackBytes (or the system default where that much
// address space cannot be had). An exception that leaves fn is rethrown by join().
class AnalysisThread {
 public:
  explicit AnalysisThread(std::function<void()> fn);
  AnalysisThread(AnalysisThread&&) noexcept;
  AnalysisThread& operator=(AnalysisThread&&) = delete;
  AnalysisThread(const AnalysisThread&) = delete;
  ~AnalysisThread();  // joins if join() was not called
  void join();

 private:
  struct State;
  State* s_ = nullptr;
};

// For tests: from now on, at most `n` more AnalysisThreads start (the next is refused as the
// system would refuse it, with ThreadStartError); a negative `n` lifts the limit.
void refuse_thread_starts_after_for_testing(int n);

// Whether the calling thread is an AnalysisThread.
bool on_analysis_thread();

// Runs fn on an AnalysisThread and waits for it (inline when already on one); fn's exception, if
// any, is rethrown here.
void on_analysis_stack(const std::function<void()>& fn);

template <class Fn>
void parallel_for(size_t n, unsigned threads, Fn&& fn) {
  if (n == 0) return;
  if (threads <= 1 && on_analysis_thread()) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<size_t> next{0};
  auto drain = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) fn(i);
  };
  unsigned k = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(n)));
  std::vector<AnalysisThread> pool;
  pool.reserve(k);
  for (unsigned w = 0; w < k; ++w) {
    try {
      pool.emplace_back(drain);
    } catch (const ThreadStartError&) {
      if (pool.empty()) throw;
      break;  // threads or memory ran short: the threads started share the work
    }
  }
  for (auto& th : pool) th.join();
}

// parallel_for over items of very different sizes (files): the threads pull them largest first,
// so that a large item pulled last does not run on alone after the others are done. fn(i) gets the
// item's own index; `size(i)` orders them (ties keep index order). With one thread, index order.
template <class Size, class Fn>
void parallel_for_largest_first(size_t n, unsigned threads, Size&& size, Fn&& fn) {
  if (threads <= 1) {
    parallel_for(n, threads, fn);
    return;
  }
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return size(a) > size(b); });
  parallel_for(n, threads, [&](size_t k) { fn(order[k]); });
}

}  // namespace tl
