// parallel_for: runs fn(0..n-1) on up to `threads` threads pulling indices from a shared counter
// (work items differ a lot in size: files, programs).
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace tl {

template <class Fn>
void parallel_for(size_t n, unsigned threads, Fn&& fn) {
  if (threads <= 1 || n <= 1) {
    for (size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  unsigned k = std::min<unsigned>(threads, static_cast<unsigned>(n));
  for (unsigned w = 0; w < k; ++w)
    pool.emplace_back([&] {
      for (size_t i; (i = next.fetch_add(1)) < n;) fn(i);
    });
  for (auto& th : pool) th.join();
}

}  // namespace tl
