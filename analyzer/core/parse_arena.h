// A bump arena for tree-sitter's allocations during one whole-file parse.
//
// Why: a parse makes millions of small allocations (subtrees, stack nodes, child arrays), frees
// many of them as it goes, and frees the rest when its tree is deleted, after the front end has
// copied the tree into its own compact form (flat::Tree). Through malloc that cost about a tenth of
// a run's instructions (callgrind, Debian's torch package: malloc, free and their consolidation
// 1.7 G of 16.7 G, and the tree's deletion walk 0.36 G more). It also spread the freed memory over
// each thread's malloc arena, where it stayed: peak memory grew with the number of threads.
//
// Inside a Scope, this thread's tree-sitter allocations come from its own reserved range,
// one after the other; a free gives back only the last block (the common pattern of a growing
// array), and the whole range is given back at once when the Scope ends, so that the tree need
// not be deleted node by node. Between parses a thread keeps a few committed megabytes for the
// next parse (all threads together at most kKeptBudget), and gives the rest back to the system.
//
// Outside a Scope, and for pointers outside the range (memory from before, or from another
// thread), the functions are malloc's. Off under AddressSanitizer (so that it checks tree-sitter's
// memory as before), under a limit on address space (`ulimit -v`) or strict overcommit (where the
// reserved ranges would take room the run needs), and when TRAINLINT_PARSE_ARENA=off is set (for
// side-by-side measurements): the functions are then malloc's alone. Where malloc fails they end
// the process with a message and exit status 2 (tree-sitter has no way to go on without a block).
#pragma once
#include <cstddef>

namespace tl::parse_arena {

// The allocator tree-sitter is given (ts_set_allocator): malloc, calloc, realloc and free.
void* allocate(size_t bytes);
void* allocate_zeroed(size_t count, size_t size);
void* reallocate(void* p, size_t bytes);
void release(void* p);

// Whether Scopes can be active in this process (not under ASan, not switched off).
bool enabled();

// While alive (and active()), this thread's tree-sitter allocations come from its arena. Memory
// handed out in the Scope must not be used after it: the tree and the parser made in it are
// dropped with it, and nothing that outlives the Scope may allocate through tree-sitter in it (a
// parser kept for later parses, say). overflowed(): the arena ran out and some blocks came from
// malloc, so the tree must be deleted (its malloc blocks freed) before the Scope ends. Scopes do
// not nest: an inner one is inactive and pauses the outer one, so that what is allocated in it
// comes from malloc (a parse that must use this thread's kept parser, say).
class Scope {
 public:
  Scope();
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
  bool active() const { return active_; }
  bool overflowed() const;

 private:
  bool active_ = false;
  bool paused_outer_ = false;
};

// What this thread's arena holds now (for tests): bytes in use, committed bytes kept, the most
// bytes in use in the current or last Scope.
struct Usage {
  size_t used = 0, kept = 0, peak = 0;
};
Usage usage();

// For tests: Scopes made from now on take at most `bytes` from the arena, the rest from malloc
// (0: no limit but the reserved range), so that overflow can be exercised; and how many Scopes
// of this process have overflowed.
void set_limit_for_testing(size_t bytes);
size_t overflow_count();

}  // namespace tl::parse_arena
