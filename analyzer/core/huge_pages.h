// Transparent huge pages for the few very large buffers of a run (the text and the tree of a
// file of many megabytes). Where the kernel hands them out only on request (the `madvise` mode of
// /sys/kernel/mm/transparent_hugepage/enabled, common on servers and virtual machines), each 4 KiB
// page of a fresh buffer costs a page fault on first touch: 5,000 faults for a 20 MB text, 25,000
// for its tree, and on a virtual machine each fault is dear. Asking for huge pages on the 2 MiB
// aligned inside of the buffer, before anything touches it, turns those into a few dozen faults.
#pragma once
#include <cstddef>
#include <cstdint>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace tl {

// Below this a buffer is left alone: it may share its pages with others, and it has few of them.
inline constexpr size_t kHugePageMinBytes = size_t{4} << 20;

// Asks for transparent huge pages on the whole 2 MiB pages inside [p, p + bytes) when the buffer
// is at least kHugePageMinBytes; call it before the buffer is first written. A hint: nothing
// happens where the system has no such pages or refuses.
inline void advise_huge_pages(const void* p, size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (p == nullptr || bytes < kHugePageMinBytes) return;
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  uintptr_t b = (reinterpret_cast<uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
  uintptr_t e = (reinterpret_cast<uintptr_t>(p) + bytes) & ~(kHuge - 1);
  if (e > b) (void)madvise(reinterpret_cast<void*>(b), e - b, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

// Reserves room for `n` elements in `buffer` (a std::vector or std::string about to be filled)
// and asks for huge pages on that room (advise_huge_pages), before anything touches it.
template <class Buffer>
void reserve_with_huge_pages(Buffer& buffer, size_t n) {
  buffer.reserve(n);
  advise_huge_pages(buffer.data(), buffer.capacity() * sizeof(*buffer.data()));
}

}  // namespace tl
