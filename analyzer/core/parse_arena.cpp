#include "analyzer/core/parse_arena.h"

#include "analyzer/core/limits.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define TL_PARSE_ARENA_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TL_PARSE_ARENA_ASAN 1
#endif
#endif

namespace tl::parse_arena {
namespace {

constexpr size_t kReserve = size_t{8} << 30;         // address space per thread, committed on touch
constexpr size_t kPage = size_t{2} << 20;            // kept memory is counted in 2 MiB units
// Committed memory a thread keeps between parses, and all threads together. Most files' parses fit
// in 4 MiB (a Python file under about 150 KB); memory kept is memory the rest of the run cannot
// use, and peak memory was measured to rise by what is kept (bench/README.md).
constexpr size_t kKeepPerThread = size_t{4} << 20;
constexpr size_t kKeptBudget = size_t{8} << 20;
constexpr size_t kHeader = 8;                        // each block's size, before it
constexpr size_t kNoBlock = ~size_t{0};

std::atomic<size_t> g_kept{0};
std::atomic<size_t> g_limit{0}, g_overflows{0};  // set_limit_for_testing, overflow_count

// tree-sitter cannot go on without the block (it has no failure path): the process ends, as an
// error (exit status 2), not a crash.
[[noreturn]] void out_of_memory(size_t bytes) {
  // one message: another thread that runs out at the same moment lets the first end the process
  // (and ends it itself if that has not happened within seconds)
  if (!first_to_report_out_of_memory()) {
    for (int i = 0; i < 500; ++i) ::usleep(10000);
    std::_Exit(2);
  }
  std::fprintf(stderr, "trainlint: error: out of memory (the parser asked for %zu bytes); %s\n", bytes,
               kOutOfMemoryAdvice);
  std::fflush(stderr);
  std::_Exit(2);
}

void* system_malloc(size_t bytes) {
  void* p = std::malloc(bytes);
  if (!p && bytes) out_of_memory(bytes);
  return p;
}

struct Arena {
  char* base = nullptr;
  size_t used = 0;         // blocks are handed out from here
  size_t touched = 0;      // committed (or possibly so) below this offset
  size_t kept = 0;         // committed memory kept between parses, counted in g_kept
  size_t peak = 0;         // the most `used` reached in the current or last Scope
  size_t last = kNoBlock;  // the payload offset of the last block handed out
  size_t cap = 0;          // the reserved range's size
  size_t limit = 0;        // the Scope's limit on `used` (at most `cap`)
  bool active = false, overflowed = false, reserve_failed = false;

  bool owns(const void* p) const {
    return base && static_cast<size_t>(static_cast<const char*>(p) - base) < cap;
  }
  bool reserve() {
#if defined(__linux__)
    if (base) return true;
    if (reserve_failed) return false;
    const size_t want = kReserve;
    void* p = mmap(nullptr, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
      reserve_failed = true;
      return false;
    }
    base = static_cast<char*>(p);
    cap = want;
#if defined(MADV_HUGEPAGE)
    // Huge pages past the first kKeepPerThread only: most parses stay within that, and a parse
    // of a small file would otherwise commit a whole 2 MiB page per thread (at -j 16 on the torch
    // package, the arenas' share of peak memory, 15 MB of it; bench/README.md, "The arena's
    // first megabytes in small pages"); a large file's parse still gets huge pages beyond it.
    (void)madvise(base + kKeepPerThread, cap - kKeepPerThread, MADV_HUGEPAGE);
#endif
    return true;
#else
    return false;
#endif
  }
  // The end of `bytes` of payload at offset `at`, rounded up to whole words; 0 where it would
  // pass the Scope's limit (`at` is at most the limit).
  size_t end_of(size_t at, size_t bytes) const {
    if (bytes > limit - at) return 0;
    size_t end = at + ((bytes + 7) & ~size_t{7});
    return end <= limit ? end : 0;
  }
  // The payload at `at` (the last block) becomes `bytes` long, ending at `end`.
  void set_last(size_t at, size_t bytes, size_t end) {
    std::memcpy(base + at - kHeader, &bytes, sizeof bytes);
    last = at;
    used = end;
    if (used > peak) peak = used;
    if (used > touched) touched = used;
  }
  // A block of `bytes` at the end, or null when the range is full.
  void* bump(size_t bytes) {
    if (kHeader > limit - used) return nullptr;
    size_t at = used + kHeader, end = end_of(at, bytes);
    if (!end) return nullptr;
    set_last(at, bytes, end);
    return base + at;
  }
  static size_t size_of(const void* p) {
    size_t n;
    std::memcpy(&n, static_cast<const char*>(p) - kHeader, sizeof n);
    return n;
  }
  size_t offset(const void* p) const { return static_cast<size_t>(static_cast<const char*>(p) - base); }

  // The end of a Scope: everything handed out is given back; a few committed pages stay.
  void reset() {
    used = 0;
    last = kNoBlock;
    size_t want = std::min((touched + kPage - 1) & ~(kPage - 1), kKeepPerThread);
    if (want > kept) {  // grow what this thread keeps as far as the shared budget allows
      size_t total = g_kept.load(std::memory_order_relaxed);
      size_t grant;
      do {
        size_t room = total < kKeptBudget ? kKeptBudget - total : 0;
        grant = std::min(want - kept, room) & ~(kPage - 1);
      } while (grant && !g_kept.compare_exchange_weak(total, total + grant, std::memory_order_relaxed));
      kept += grant;
    }
    if (touched > kept) {
#if defined(__linux__)
      (void)madvise(base + kept, touched - kept, MADV_DONTNEED);
#endif
      touched = kept;
    }
  }
  ~Arena() {
#if defined(__linux__)
    if (base) munmap(base, cap);
#endif
    g_kept.fetch_sub(kept, std::memory_order_relaxed);
  }
};

thread_local Arena t_arena;

bool compute_enabled() {
#if defined(TL_PARSE_ARENA_ASAN) || !defined(__linux__)
  return false;
#else
  const char* e = std::getenv("TRAINLINT_PARSE_ARENA");
  if (e && (std::string_view(e) == "off" || std::string_view(e) == "0")) return false;
  // Under a limit on address space (`ulimit -v`, common on shared clusters) the reserved ranges
  // would take room the run needs (its threads' stacks and malloc's heaps are address space too):
  // measured at 3 GB and -j 4, giving the ranges a quarter of the limit made malloc fail. Parses
  // use malloc there, as they did before the arena.
  if (address_space_limit()) return false;
  // Under strict overcommit (vm.overcommit_memory = 2) the kernel charges a reservation whole,
  // MAP_NORESERVE or not: a few threads' ranges would use up the commit limit that malloc needs.
  if (FILE* f = std::fopen("/proc/sys/vm/overcommit_memory", "r")) {
    int mode = 0;
    bool strict = std::fscanf(f, "%d", &mode) == 1 && mode == 2;
    std::fclose(f);
    if (strict) return false;
  }
  return true;
#endif
}

}  // namespace

bool enabled() {
  static const bool on = compute_enabled();
  return on;
}

void* allocate(size_t bytes) {
  Arena& a = t_arena;
  if (a.active) {
    if (void* p = a.bump(bytes)) return p;
    a.overflowed = true;
  }
  return system_malloc(bytes);
}

void* allocate_zeroed(size_t count, size_t size) {
  Arena& a = t_arena;
  if (a.active) {
    size_t bytes = count * size;
    if (size && bytes / size != count) out_of_memory(~size_t{0});
    if (void* p = a.bump(bytes)) {
      std::memset(p, 0, bytes);
      return p;
    }
    a.overflowed = true;
  }
  void* p = std::calloc(count, size);
  if (!p && count && size) out_of_memory(count * size);
  return p;
}

void* reallocate(void* p, size_t bytes) {
  if (!p) return allocate(bytes);
  Arena& a = t_arena;
  if (!a.owns(p)) {
    void* q = std::realloc(p, bytes);
    if (!q && bytes) out_of_memory(bytes);
    return q;
  }
  size_t old = Arena::size_of(p);
  size_t at = a.offset(p);
  if (a.active && at == a.last)  // the last block grows (or shrinks) where it is
    if (size_t end = a.end_of(at, bytes)) {
      a.set_last(at, bytes, end);
      return p;
    }
  void* q = a.active ? a.bump(bytes) : nullptr;
  if (!q) {
    a.overflowed = a.overflowed || a.active;
    q = system_malloc(bytes);
  }
  std::memcpy(q, p, std::min(old, bytes));
  return q;
}

void release(void* p) {
  if (!p) return;
  Arena& a = t_arena;
  if (!a.owns(p)) {
    std::free(p);
    return;
  }
  if (a.offset(p) == a.last) {  // the last block: its room is handed out again
    a.used = a.last - kHeader;
    a.last = kNoBlock;
  }
}

Scope::Scope() {
  Arena& a = t_arena;
  if (a.active) {  // nested: the outer Scope pauses until this one ends
    a.active = false;
    paused_outer_ = true;
    return;
  }
  if (!enabled() || !a.reserve()) return;
  size_t limit = g_limit.load(std::memory_order_relaxed);
  a.limit = limit && limit < a.cap ? limit : a.cap;
  a.active = true;
  a.overflowed = false;
  a.peak = 0;
  active_ = true;
}

Scope::~Scope() {
  Arena& a = t_arena;
  if (paused_outer_) a.active = true;
  if (!active_) return;
  a.active = false;
  if (a.overflowed) g_overflows.fetch_add(1, std::memory_order_relaxed);
  a.reset();
}

bool Scope::overflowed() const { return active_ && t_arena.overflowed; }

void set_limit_for_testing(size_t bytes) { g_limit.store(bytes, std::memory_order_relaxed); }
size_t overflow_count() { return g_overflows.load(std::memory_order_relaxed); }

Usage usage() {
  const Arena& a = t_arena;
  return {a.used, a.kept, a.peak};
}

}  // namespace tl::parse_arena
