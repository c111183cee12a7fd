// Tree::parse_in_pieces (analyzer/python/ast.h): a huge file is parsed in pieces cut at top-level
// statements so that tree-sitter's tree never holds the whole file. The pieces must give exactly
// the tree a whole-file parse gives. Pieces of 1 byte cut at every boundary the scan finds, which
// is the strictest check of the scan: every fixture, the examples, Debian's torch tree when
// installed, and texts written to trip the scan (strings and brackets spanning lines, clauses and
// decorators at column 0, continuations).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "analyzer/python/ast.h"
#include "tests/support/test_support.h"
#include "tests/support/tree_diff.h"

namespace fs = std::filesystem;
using namespace tl;
using namespace tl::py;

namespace {

std::string read(const fs::path& p) { return tl::test::read_file(p); }

std::string difference(const Tree& a, const Tree& b) { return tl::test::tree_difference(a, b); }

using tl::test::python_files;

struct Tally {
  size_t files = 0, cut = 0;
};

void check(const fs::path& p, Tally& tally) {
  SourceFile src(p.string(), read(p));
  ++tally.files;
  std::optional<Tree> pieces = Tree::parse_in_pieces(src, 1);
  if (!pieces) return;  // no statement to cut at
  Tree all = Tree::parse(src);
  if (!all.errors().empty()) {  // error recovery may differ; the error itself is found
    EXPECT_FALSE(pieces->errors().empty()) << p;
    return;
  }
  ++tally.cut;
  EXPECT_EQ(difference(*pieces, all), "") << p;
  // helper threads parsing ahead of the conversion give the same tree
  std::optional<Tree> threaded = Tree::parse_in_pieces(src, 64, 3);
  if (threaded) EXPECT_EQ(difference(*threaded, all), "") << p << " on 3 threads";
}

}  // namespace

TEST(ParsePieces, EveryFixtureAndExampleParsesInPiecesAsAWhole) {
  Tally t;
  for (const char* dir : {"tests/fixtures/python", "examples"})
    for (auto& p : python_files(fs::path(tl::test::source_dir()) / dir, 100000)) check(p, t);
  // most files have top-level statements to cut at, and no syntax error
  EXPECT_GT(t.cut, t.files * 3 / 4) << t.cut << " of " << t.files;
}

TEST(ParsePieces, DebiansTorchTreeParsesInPiecesAsAWhole) {
  fs::path torch = "/usr/lib/python3/dist-packages/torch";
  if (!fs::exists(torch)) GTEST_SKIP() << "Debian's python3-torch is not installed";
  Tally t;
  for (auto& p : python_files(torch, 300)) check(p, t);
  EXPECT_GT(t.cut, t.files * 3 / 4) << t.cut << " of " << t.files;
}

TEST(ParsePieces, TextsThatLookLikeStatementsInsideOthersAreNotCut) {
  const char* text = R"PY(import os
x = """
def not_a_function():
    pass
class NotAClass: pass
"""
y = '''it''s
@not_a_decorator
'''
z = (
1,
def_ := 2,
)
w = [1,
2]
total = 1 + \
2
s = "a \" quote"; t = 'b \' quote'
r = r"raw \" still in the string"
if x:
    pass
elif y:
    pass
else:
    pass
try:
    pass
except ValueError:
    pass
finally:
    pass
@decorator
# a comment between the decorator and the function
@other(
    arg,
)
def f():
    return """
at column 0"""
class C:
    """Doc."""
    def m(self):
        return {
'key': 1,
}
# trailing comment
for i in range(3):
    pass
else:
    pass
while False:
    pass
else:
    pass
async def g():
    await h()
with open("f") as fh:
    pass
print(f"{x!r} and {y}")
)PY";
  SourceFile src("tricky.py", text);
  std::optional<Tree> pieces = Tree::parse_in_pieces(src, 1);
  ASSERT_TRUE(pieces.has_value()) << "the text has no syntax error and top-level statements to cut at";
  Tree all = Tree::parse(src);
  EXPECT_EQ(difference(*pieces, all), "");
  // what looks like definitions inside the strings stays in the strings: f, C.m and g only
  size_t defs = 0;
  for (NodeId n = 0; n < all.size(); ++n) defs += all.is(n, K::FunctionDefinition);
  EXPECT_EQ(defs, 3u);
}

TEST(ParsePieces, ASyntaxErrorStaysInItsPieceAndTheRestParsesAsAWhole) {
  std::string good = "import torch\n\ndef train(model, loader):\n    for batch in loader:\n        model(batch)\n";
  std::string text = "import os\ndef broken(:\n    pass\n" + good;
  SourceFile src("broken.py", text);
  std::optional<Tree> pieces = Tree::parse_in_pieces(src, 1);
  ASSERT_TRUE(pieces.has_value());
  Tree all = Tree::parse(src);
  ASSERT_FALSE(all.errors().empty());
  ASSERT_FALSE(pieces->errors().empty());
  EXPECT_EQ(pieces->errors().front().first, all.errors().front().first);
  // the same on threads, where the merge of the broken piece with the next ones waits for pieces
  // parsed by other threads
  for (unsigned threads : {2u, 4u}) {
    std::optional<Tree> threaded = Tree::parse_in_pieces(src, 1, threads);
    ASSERT_TRUE(threaded.has_value());
    EXPECT_EQ(difference(*threaded, *pieces), "") << threads << " threads";
  }
  // the statements after the broken one are the same nodes as in a parse of them alone
  SourceFile rest("rest.py", good);
  Tree alone = Tree::parse(rest);
  size_t off = text.size() - good.size();
  NodeId from = kNone;
  for (NodeId n = 0; n < pieces->size(); ++n)
    if ((*pieces)[n].start == off && pieces->parent(n) == pieces->root()) {
      from = n;
      break;
    }
  ASSERT_NE(from, kNone) << "`import torch` is a top-level statement of its own";
  EXPECT_EQ(pieces->size() - from, alone.size() - 1);
  for (NodeId n = from, m = 1; n < pieces->size() && m < alone.size(); ++n, ++m) {
    EXPECT_EQ(pieces->kind(n), alone.kind(m));
    EXPECT_EQ((*pieces)[n].start, alone[m].start + off);
  }
}

TEST(ParsePieces, OnlyAnErrorInAPiecesLastStatementIsParsedAgainWithTheNextPieces) {
  // A piece's statements before its last one are whole whatever follows the cut after it: an
  // error there is the file's own and the piece is joined as it is. An error in the last
  // statement may come from a cut inside it (the scan misread the text): the piece is parsed
  // again with up to three pieces after it. On a 20 MB file, re-parsing every piece with an
  // error in it four times over was a third of the parse.
  std::string good;
  for (int i = 0; i < 6; ++i) good += "def f" + std::to_string(i) + "(model, batch):\n    return model(batch)\n";
  std::string text = "import os\ndef broken():\n    x = = 2\n    return x\n" + good + good;
  SourceFile src("broken.py", text);
  Tree all = Tree::parse(src);
  ASSERT_FALSE(all.errors().empty());
  for (unsigned threads : {1u, 3u}) {
    // pieces of 200 bytes or more: good statements follow the broken one in its piece
    size_t reparsed = 0;
    std::optional<Tree> pieces = Tree::parse_in_pieces(src, 200, threads, &reparsed);
    ASSERT_TRUE(pieces.has_value());
    EXPECT_EQ(reparsed, 0u) << threads << " threads";
    ASSERT_FALSE(pieces->errors().empty());
    EXPECT_EQ(pieces->errors().front().first, all.errors().front().first);
    // a piece per statement: the broken one is the last of its piece, parsed again once with
    // the piece after it, whose statement is whole: the error is the file's own and stays
    reparsed = 0;
    std::optional<Tree> each = Tree::parse_in_pieces(src, 1, threads, &reparsed);
    ASSERT_TRUE(each.has_value());
    EXPECT_EQ(reparsed, 1u) << threads << " threads";
    ASSERT_FALSE(each->errors().empty());
    EXPECT_EQ(each->errors().front().first, all.errors().front().first);
    // the statements after the merged pieces are the whole-file parse's, node for node
    EXPECT_EQ(pieces->size(), all.size()) << threads << " threads";
  }
  // broken statements one after another: each merged piece still ends in an error, so the first
  // is parsed again with one, two and three pieces after it, and no further
  SourceFile run_of_errors("errors.py", "a = = 1\nb = = 2\nc = = 3\nd = = 4\nimport os\n");
  for (unsigned threads : {1u, 3u}) {
    size_t reparsed = 0;
    std::optional<Tree> each = Tree::parse_in_pieces(run_of_errors, 1, threads, &reparsed);
    ASSERT_TRUE(each.has_value());
    EXPECT_EQ(reparsed, 3u) << threads << " threads";
    EXPECT_GE(each->errors().size(), 4u) << threads << " threads";
  }
}

TEST(ParsePieces, AHugeFileIsParsedInPiecesByParseWithTheSameTree) {
  // over the 2 MB at which Tree::parse cuts; the whole-file parse is forced through one piece
  std::string body;
  for (int i = 0; body.size() < (size_t{5} << 20) / 2; ++i)
    body += "@register\ndef step_" + std::to_string(i) + "(model, batch):\n    loss = model(batch)\n    loss.backward()\n"
            "    if loss.item() > 1:\n        print('big')\n    else:\n        pass\n    return '''\ndef x():\n'''\n\n";
  SourceFile src("huge.py", body);
  Tree cut = Tree::parse(src);
  std::optional<Tree> one = Tree::parse_in_pieces(src, body.size() + 1);
  EXPECT_FALSE(one.has_value()) << "one piece is no cut";
  std::optional<Tree> pieces = Tree::parse_in_pieces(src, 4096);
  ASSERT_TRUE(pieces.has_value());
  EXPECT_EQ(difference(cut, *pieces), "");
  Tree on_threads = Tree::parse(src, 4);
  EXPECT_EQ(difference(cut, on_threads), "");
  EXPECT_TRUE(cut.errors().empty());
}
