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
#include <vector>

namespace tl {

inline constexpr size_t kAnalysisStackBytes = size_t{256} << 20;
// The stack each AnalysisThread asks for: kAnalysisStackBytes, or under a limit on address space
// (`ulimit -v`), where every thread's stack is counted whole against that limit, a 64th of the
// limit (at least 4 MiB). The walks bound their own depth (analyzer/python/collect.cpp's
// kMaxDepth and the like): the 5,000-deep stress files need under 1 MiB in a release build; the
// large default is for sanitizer builds, whose frames are several times larger.
size_t analysis_stack_bytes();

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
