// The parse arena (analyzer/core/parse_arena.h): tree-sitter's allocations during a whole-file parse
// come from a per-thread bump range given back at once. The allocator's own rules, then the trees:
// a parse in the arena, one whose arena ran out part way (blocks from both), and one through
// malloc (the parse cache's, which keeps its tree-sitter tree) must be the same tree.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "analyzer/core/parse_arena.h"
#include "analyzer/cpp/syntax.h"
#include "analyzer/python/ast.h"
#include "tests/support/test_support.h"
#include "tests/support/tree_diff.h"

using namespace tl;
namespace pa = tl::parse_arena;

namespace {

#define SKIP_WITHOUT_ARENA() \
  if (!pa::enabled()) GTEST_SKIP() << "the parse arena is off in this build (AddressSanitizer) or by TRAINLINT_PARSE_ARENA"

struct LimitForTest {
  explicit LimitForTest(size_t bytes) { pa::set_limit_for_testing(bytes); }
  ~LimitForTest() { pa::set_limit_for_testing(0); }
};

}  // namespace

TEST(ParseArena, BlocksComeFromTheArenaInOrderAndTheLastOneIsReused) {
  SKIP_WITHOUT_ARENA();
  {
    pa::Scope scope;
    ASSERT_TRUE(scope.active());
    EXPECT_EQ(pa::usage().used, 0u);
    auto* a = static_cast<char*>(pa::allocate(10));
    auto* b = static_cast<char*>(pa::allocate(20));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 8, 0u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b) % 8, 0u);
    EXPECT_GT(b, a);
    const size_t after_two = pa::usage().used;
    EXPECT_GE(after_two, 30u);
    // freeing a block that is not the last one gives nothing back
    pa::release(a);
    EXPECT_EQ(pa::usage().used, after_two);
    // the last one grows where it is, its bytes kept
    std::memset(b, 'x', 20);
    auto* b2 = static_cast<char*>(pa::reallocate(b, 4000));
    EXPECT_EQ(b2, b);
    EXPECT_EQ(std::string(b2, 20), std::string(20, 'x'));
    EXPECT_GE(pa::usage().used, 4000u);
    // a block that is not the last moves, its bytes copied
    auto* c = static_cast<char*>(pa::allocate(8));
    std::memset(b2, 'y', 4000);
    auto* b3 = static_cast<char*>(pa::reallocate(b2, 5000));
    EXPECT_NE(b3, b2);
    EXPECT_EQ(std::string(b3, 4000), std::string(4000, 'y'));
    // freeing the last block hands its room out again
    const size_t before = pa::usage().used;
    pa::release(b3);
    EXPECT_LT(pa::usage().used, before);
    auto* d = static_cast<char*>(pa::allocate(16));
    EXPECT_EQ(d, b3);
    // zeroed blocks are zero even where the room was written before
    pa::release(d);
    auto* z = static_cast<unsigned char*>(pa::allocate_zeroed(100, 10));
    for (size_t i = 0; i < 1000; ++i) ASSERT_EQ(z[i], 0) << i;
    pa::release(c);
    EXPECT_GE(pa::usage().peak, 4000u);
  }
  EXPECT_EQ(pa::usage().used, 0u);  // given back at the end of the Scope
  EXPECT_LE(pa::usage().kept, size_t{4} << 20);
}

TEST(ParseArena, OutsideAScopeAndForOtherPointersItIsMalloc) {
  SKIP_WITHOUT_ARENA();
  void* before = pa::allocate(64);  // malloc's
  std::memset(before, 1, 64);
  EXPECT_EQ(pa::usage().used, 0u);
  {
    pa::Scope scope;
    ASSERT_TRUE(scope.active());
    // a block from before the Scope is malloc's: grown and freed by malloc
    before = pa::reallocate(before, 100000);
    EXPECT_EQ(pa::usage().used, 0u);
    EXPECT_EQ(static_cast<unsigned char*>(before)[63], 1);
    void* outer_block = pa::allocate(32);
    const size_t used = pa::usage().used;
    EXPECT_GT(used, 0u);
    {
      pa::Scope inner;  // scopes do not nest: the outer one pauses, and malloc serves
      EXPECT_FALSE(inner.active());
      void* q = pa::allocate(48);
      EXPECT_EQ(pa::usage().used, used);
      pa::release(q);
    }
    void* again = pa::allocate(16);  // the outer one serves again
    EXPECT_GT(pa::usage().used, used);
    EXPECT_GT(again, outer_block);
  }
  pa::release(before);
  void* z = pa::allocate_zeroed(3, 7);
  EXPECT_EQ(static_cast<unsigned char*>(z)[20], 0);
  pa::release(z);
  EXPECT_EQ(pa::usage().used, 0u);
}

TEST(ParseArena, AnArenaThatRunsOutServesTheRestFromMalloc) {
  SKIP_WITHOUT_ARENA();
  LimitForTest limit(4096);
  const size_t overflows = pa::overflow_count();
  {
    pa::Scope scope;
    ASSERT_TRUE(scope.active());
    void* small = pa::allocate(1000);
    EXPECT_FALSE(scope.overflowed());
    auto* big = static_cast<char*>(pa::allocate(10000));
    EXPECT_TRUE(scope.overflowed());
    std::memset(big, 2, 10000);
    // the last arena block cannot grow past the limit: it moves to malloc, its bytes kept
    std::memset(small, 3, 1000);
    auto* moved = static_cast<char*>(pa::reallocate(small, 8000));
    EXPECT_EQ(std::string(moved, 1000), std::string(1000, '\3'));
    pa::release(moved);
    pa::release(big);
  }
  EXPECT_EQ(pa::overflow_count(), overflows + 1);
}

// Python and C++ fixtures parsed three ways: in the arena (the plain parse), in an arena limited
// to 64 KiB (every larger parse overflows into malloc part way), and through malloc alone (the
// parse cache, which keeps tree-sitter's tree for incremental parses).
TEST(ParseArena, TreesInTheArenaEqualTreesThroughMallocAndWhenItRunsOut) {
  SKIP_WITHOUT_ARENA();
  size_t texts = 0, overflowed = 0;
  for (const auto& p : test::source_files_under({"tests/fixtures/python", "examples", "fuzz/regressions/python"},
                                                {".py", ""})) {
    std::string text = test::read_file(p);
    if (text.size() > (1u << 20)) continue;  // a whole-file parse
    SourceFile src(p.string(), text);
    py::Tree arena = py::Tree::parse(src);
    py::ParseCache cache;
    py::Tree through_malloc = cache.parse(src);
    EXPECT_EQ(cache.stats().full, 1u);
    EXPECT_EQ(test::tree_difference(arena, through_malloc), "") << p;
    const size_t before = pa::overflow_count();
    {
      LimitForTest limit(size_t{64} << 10);
      py::Tree part = py::Tree::parse(src);
      EXPECT_EQ(test::tree_difference(arena, part), "") << p;
    }
    overflowed += pa::overflow_count() - before;
    ++texts;
  }
  EXPECT_GT(texts, 100u);
  EXPECT_GT(overflowed, 20u);  // the limited arena did run out, often
  size_t cpp = 0;
  for (const auto& p : test::source_files_under({"tests/fixtures/cpp", "examples/cpp"}, {".cpp", ".h", ".cc"})) {
    SourceFile src(p.string(), test::read_file(p));
    auto arena = cpp::syntax::Tree::parse(src);
    LimitForTest limit(size_t{16} << 10);
    auto part = cpp::syntax::Tree::parse(src);
    EXPECT_EQ(test::tree_difference(arena, part), "") << p;
    ++cpp;
  }
  EXPECT_GT(cpp, 10u);
}
