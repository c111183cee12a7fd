// The Python grammar's external scanner is compiled with two changes (cmake/Grammars.cmake).
// The first stops reading ahead over a block of comment lines as soon as nothing it could read
// would make it return a token, which turns k^2 line reads into k; it must never change a tree.
// The grammar exactly as fetched is compiled into this test program as well, under other symbol
// names (cmake/Grammars.cmake), and every text below is parsed with both: the trees must be equal
// node for node (symbol, byte range, field, depth, missing and error flags), anonymous tokens
// included. The second is a fix: a parser reused after a file that ends inside an f-string must
// parse the next file as a fresh parser does.
#include <gtest/gtest.h>
#include <tree_sitter/api.h>
#include <tree_sitter/parser.h>  // TSLexer, for driving the scanner directly

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "analyzer/python/ast.h"
#include "tests/support/test_support.h"
#include "tests/support/tree_diff.h"

extern "C" const TSLanguage* tree_sitter_python(void);
extern "C" const TSLanguage* tree_sitter_python_upstream(void);
extern "C" {
void* tree_sitter_python_external_scanner_create(void);
void tree_sitter_python_external_scanner_destroy(void*);
bool tree_sitter_python_external_scanner_scan(void*, TSLexer*, const bool*);
void* tree_sitter_python_upstream_external_scanner_create(void);
void tree_sitter_python_upstream_external_scanner_destroy(void*);
bool tree_sitter_python_upstream_external_scanner_scan(void*, TSLexer*, const bool*);
}

namespace fs = std::filesystem;

namespace {

struct NodeSig {
  TSSymbol symbol;
  uint32_t start, end;
  TSFieldId field;
  uint32_t depth;
  bool missing, error;
  bool operator==(const NodeSig&) const = default;
};

std::vector<NodeSig> signature_of(const TSTree* tree) {
  std::vector<NodeSig> out;
  TSTreeCursor c = ts_tree_cursor_new(ts_tree_root_node(tree));
  uint32_t depth = 0;
  for (;;) {
    TSNode n = ts_tree_cursor_current_node(&c);
    out.push_back({ts_node_symbol(n), ts_node_start_byte(n), ts_node_end_byte(n), ts_tree_cursor_current_field_id(&c),
                   depth, ts_node_is_missing(n), ts_node_has_error(n)});
    if (ts_tree_cursor_goto_first_child(&c)) {
      ++depth;
      continue;
    }
    bool done = false;
    while (!ts_tree_cursor_goto_next_sibling(&c)) {
      if (!ts_tree_cursor_goto_parent(&c)) {
        done = true;
        break;
      }
      --depth;
    }
    if (done) break;
  }
  ts_tree_cursor_delete(&c);
  return out;
}

TSTree* parse(const TSLanguage* lang, const std::string& text, const TSTree* old = nullptr) {
  TSParser* p = ts_parser_new();
  ts_parser_set_language(p, lang);
  TSTree* tree = ts_parser_parse_string(p, old, text.data(), static_cast<uint32_t>(text.size()));
  ts_parser_delete(p);
  return tree;
}

std::vector<NodeSig> signature(const TSLanguage* lang, const std::string& text) {
  TSTree* tree = parse(lang, text);
  auto out = signature_of(tree);
  ts_tree_delete(tree);
  return out;
}

std::string first_difference(const std::vector<NodeSig>& a, const std::vector<NodeSig>& b) {
  size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i)
    if (!(a[i] == b[i])) return "node " + std::to_string(i) + " at byte " + std::to_string(b[i].start) + " differs";
  if (a.size() != b.size()) return "node counts " + std::to_string(a.size()) + " vs " + std::to_string(b.size());
  return "";
}

// Empty when both grammars give the same tree, else where they first differ.
std::string difference(const std::string& text) {
  return first_difference(signature(tree_sitter_python(), text), signature(tree_sitter_python_upstream(), text));
}

TSPoint point_at(const std::string& text, size_t byte) {
  TSPoint p{0, 0};
  for (size_t i = 0; i < byte; ++i) {
    if (text[i] == '\n') {
      ++p.row;
      p.column = 0;
    } else {
      ++p.column;
    }
  }
  return p;
}

std::string comment_block(size_t lines, size_t indent) {
  std::string s;
  for (size_t i = 0; i < lines; ++i)
    s += std::string(indent, ' ') + "# note " + std::to_string(i) + ": why the code below does what it does\n";
  return s;
}

// Where comments meet indentation: at, above and below the block's depth, at a block's start,
// between methods, before a dedent, at the end of the file, with tabs, form feeds, blank lines,
// continuation lines, strings and brackets, and in broken code (error recovery).
TEST(PythonScanner, CommentLayoutsGiveTheGrammarsOwnTrees) {
  const std::string m = "class C:\n    def f(self):\n        return 1\n";
  std::vector<std::string> texts = {
      m + comment_block(50, 4) + "    def g(self):\n        return 2\n",
      m + comment_block(50, 8) + "    def g(self):\n        return 2\n",
      m + comment_block(50, 0) + "    def g(self):\n        return 2\n",
      m + comment_block(50, 2) + "    def g(self):\n        return 2\n",
      m + comment_block(50, 12) + "        x = 3\n",
      m + comment_block(50, 4) + "x = 1\n",
      m + comment_block(50, 8) + "x = 1\n",
      m + comment_block(50, 8),
      m + comment_block(50, 4),
      m + comment_block(50, 0),
      "def f():\n" + comment_block(30, 4) + "    return 1\n",
      "def f():\n" + comment_block(30, 0) + "    return 1\n",
      "def f():\n" + comment_block(30, 8) + "    return 1\n",
      "def f():\n" + comment_block(30, 4),
      "if x:\n    pass\n" + comment_block(20, 4) + "else:\n    pass\n",
      "try:\n    pass\n" + comment_block(20, 4) + "except E:\n    pass\n" + comment_block(5, 0) + "finally:\n    pass\n",
      "def f():\n    x = 1\n\n\n" + comment_block(10, 4) + "\n\n" + comment_block(10, 0) + "\n    return x\n",
      "def f():\n\tx = 1\n\t# tab\n\t# tab\n\treturn x\n",
      "def f():\n    x = 1\n    # a\n\f    # b\n    return x\n",
      "def f():\n    x = 1\r\n    # a\r\n    # b\r\n    return x\r\n",
      "def f():\n    x = 1 \\\n" + comment_block(5, 4) + "    return x\n",
      "def f():\n    x = 1\n    # a\n    \\\n    y = 2\n",
      "def f():\n    x = 1\n    # a\n\\x\n",
      "def f():\n    s = '''\n# not a comment\n    '''\n" + comment_block(5, 4) + "    return s\n",
      "def f():\n    y = (1,\n" + comment_block(5, 0) + "         2)\n    return y\n",
      "def f():\n    y = f\"{x}\"\n    # c\n    return y\n",
      "def f(:\n" + comment_block(10, 4) + "    return\n",
      "class C:\n    def f(self)\n" + comment_block(10, 4) + "        pass\n",
      "def f():\n    return (\n" + comment_block(10, 4),
      "x = 1 # trailing\n" + comment_block(10, 0) + "y = 2\n",
      "match x:\n    case 1:\n        pass\n" + comment_block(10, 4) + "    case 2:\n        pass\n",
      // each of these tells a wrong early-exit condition from the right one
      "class C:\n    def f(self):\n        return 1\n       # seven\n    def g(self):\n        return 2\n",
      "@dec\n# c\ndef f():\n    pass\n",
      "if x: pass\n# c\nelse: pass\n",
      "x = 1)\n# c\n    y = 2\n",
      "try:\n    try:\n        pass\n# c\n",
      "def f():\n    try:\n        x = 1\n# c\n    except E:\n        pass\n",
      "def f():\n\tx = 1\n        # eight\n\treturn x\n",
      "def f():\n    y = f\"{\n# c\n    x}\"\n    return y\n",
      "def f():\n    return [\n        1,\n    # c\n# c\n    ]\n",
      "def f():\n    x = 1\n    # no newline at the end",
  };
  for (auto& t : texts) EXPECT_EQ(difference(t), "") << t.substr(0, 200);
}

// Random texts of statements, clauses and comment runs at random depths (seeded: the same texts
// every run), many of them syntax errors.
TEST(PythonScanner, RandomTextsGiveTheGrammarsOwnTrees) {
  const std::vector<std::string> pieces = {
      "def f(x):", "class C:", "if x:", "else:", "elif q:", "for i in y:", "while z:", "try:", "except E:",
      "finally:", "with a as b:", "async def g():", "match x:", "case 1:", "@dec", "x = 1", "return x", "pass",
      "print('a')", "s = '''doc\n# not a comment\n'''", "f\"{x}\"", "y = (1,\n 2)", "z = [\n# c\n3]", "\\",
      "a = 1 \\", "  b", "# comment", "#", "", "   ", "\t# tab comment", "\tx = 2", "lambda: 0", "x +=",
      "'''unterminated", "(", ")", "raise", "\f# ff", "\r"};
  const std::vector<size_t> indents = {0, 0, 1, 2, 4, 4, 4, 8, 8, 12};
  const std::vector<std::string> ends = {"", "\n", "\n# end", "\n    # end\n"};
  std::mt19937 rng(20261127);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  for (int k = 0; k < 3000; ++k) {
    std::string text;
    size_t lines = 1 + pick(30);
    for (size_t l = 0; l < lines; ++l) {
      text += std::string(indents[pick(indents.size())], ' ') + pieces[pick(pieces.size())] + "\n";
      if (pick(10) < 3) {
        size_t ci = std::vector<size_t>{0, 2, 4, 8, 12}[pick(5)];
        for (size_t c = 1 + pick(6); c > 0; --c) text += std::string(ci, ' ') + "# c" + std::to_string(pick(10)) + "\n";
      }
    }
    text += ends[pick(ends.size())];
    ASSERT_EQ(difference(text), "") << text;
  }
}

// Every Python file of the repository's fixtures and examples, and a sample of Debian's torch
// tree when it is installed (its files hold long comment blocks inside classes).
TEST(PythonScanner, RealFilesGiveTheGrammarsOwnTrees) {
  std::vector<fs::path> files;
  auto add = [&](const fs::path& root, size_t most) {
    for (auto& p : tl::test::python_files(root, most)) files.push_back(p);
  };
  add(fs::path(TRAINLINT_SOURCE_DIR) / "tests" / "fixtures", 100000);
  add(fs::path(TRAINLINT_SOURCE_DIR) / "examples", 100000);
  add("/usr/lib/python3/dist-packages/torch", 300);
  ASSERT_GT(files.size(), 50u);
  for (auto& p : files) EXPECT_EQ(difference(tl::test::read_file(p)), "") << p;
}

// The scanner now reads less far ahead where it returns no token, so tree-sitter records a shorter
// look-ahead for what follows, and an incremental re-parse (trainlint lsp) reuses more. It must
// still give the tree of a fresh parse: edits inside and around comment blocks (typing code into
// one, indenting or dedenting a comment or the code after the block, deleting a run, pasting a
// comment block), each re-parsed from the edited previous tree.
TEST(PythonScanner, IncrementalReparsesAroundCommentBlocksGiveFreshTrees) {
  const std::string m = "class C:\n    def f(self):\n        return 1\n";
  const std::vector<std::string> starts = {
      m + comment_block(40, 4) + "    def g(self):\n        return 2\n",
      m + comment_block(40, 8) + "        x = 2\n    def g(self):\n        return 2\n",
      m + comment_block(40, 0) + "    def g(self):\n        return 2\n",
      "def f():\n" + comment_block(30, 4) + "    return 1\n" + comment_block(10, 0) + "x = 1\n",
  };
  const std::vector<std::string> pastes = {"x = 1\n", "    y = 2\n", "        z = 3\n", "# c\n", "    # c\n",
                                           "    ", "\n", "def h():\n", comment_block(5, 4), comment_block(5, 0), ":", "("};
  std::mt19937 rng(1127);
  for (const std::string& start : starts) {
    std::string text = start;
    TSTree* tree = parse(tree_sitter_python(), text);
    for (int round = 0; round < 150; ++round) {
      std::string next = text;
      // at a line start most of the time: where indentation and comments are decided
      size_t at = rng() % (next.size() + 1);
      if (rng() % 4 != 0) {
        size_t b = at == 0 ? std::string::npos : next.rfind('\n', at - 1);
        at = b == std::string::npos ? 0 : b + 1;
      }
      size_t removed = 0;
      std::string added;
      switch (rng() % 3) {
        case 0: added = pastes[rng() % pastes.size()]; break;
        case 1: removed = std::min(next.size() - at, static_cast<size_t>(rng() % 12)); break;
        default:
          removed = std::min(next.size() - at, static_cast<size_t>(rng() % 4));
          added = pastes[rng() % pastes.size()];
      }
      next.replace(at, removed, added);
      TSInputEdit e;
      e.start_byte = static_cast<uint32_t>(at);
      e.old_end_byte = static_cast<uint32_t>(at + removed);
      e.new_end_byte = static_cast<uint32_t>(at + added.size());
      e.start_point = point_at(text, at);
      e.old_end_point = point_at(text, at + removed);
      e.new_end_point = point_at(next, at + added.size());
      ts_tree_edit(tree, &e);
      TSTree* reparsed = parse(tree_sitter_python(), next, tree);
      ts_tree_delete(tree);
      tree = reparsed;
      text = next;
      ASSERT_EQ(first_difference(signature_of(tree), signature(tree_sitter_python(), text)), "") << text;
    }
    ts_tree_delete(tree);
  }
}

// The scanner itself, driven over a text by a lexer that counts the characters it is asked to read:
// at the line end before a block of 2,000 comment lines at the block's depth, where only a DEDENT
// could be returned, the changed scanner reads to the first comment's `#` and stops; the scanner
// as fetched reads the whole block. Both return no token. This is what the change buys, checked
// without a clock.
struct CountingLexer {
  TSLexer lexer{};
  const std::string* text = nullptr;
  size_t pos = 0, reads = 0;
  static void advance(TSLexer* l, bool) {
    auto* self = reinterpret_cast<CountingLexer*>(l);
    if (self->pos < self->text->size()) ++self->pos;
    ++self->reads;
    l->lookahead = self->pos < self->text->size() ? static_cast<unsigned char>((*self->text)[self->pos]) : 0;
  }
  static void mark_end(TSLexer*) {}
  static uint32_t get_column(TSLexer* l) {
    auto* self = reinterpret_cast<CountingLexer*>(l);
    size_t b = self->text->rfind('\n', self->pos == 0 ? 0 : self->pos - 1);
    return static_cast<uint32_t>(b == std::string::npos ? self->pos : self->pos - b - 1);
  }
  static bool at_range_start(const TSLexer*) { return false; }
  static bool eof(const TSLexer* l) {
    auto* self = reinterpret_cast<const CountingLexer*>(l);
    return self->pos >= self->text->size();
  }
  explicit CountingLexer(const std::string& t) : text(&t) {
    lexer.advance = advance;
    lexer.mark_end = mark_end;
    lexer.get_column = get_column;
    lexer.is_at_included_range_start = at_range_start;
    lexer.eof = eof;
    lexer.lookahead = t.empty() ? 0 : static_cast<unsigned char>(t[0]);
  }
};
static_assert(offsetof(CountingLexer, lexer) == 0);

TEST(PythonScanner, StopsReadingAheadOverACommentBlockAtTheBlocksDepth) {
  const std::string text = "\n" + comment_block(2000, 0) + "x = 1\n";
  bool valid[12] = {};
  valid[2] = true;  // DEDENT (the grammar's external token order: NEWLINE, INDENT, DEDENT, ...)
  auto reads = [&](void* (*create)(), bool (*scan)(void*, TSLexer*, const bool*), void (*destroy)(void*)) {
    CountingLexer l(text);
    void* scanner = create();
    EXPECT_FALSE(scan(scanner, &l.lexer, valid));
    destroy(scanner);
    return l.reads;
  };
  size_t ours = reads(tree_sitter_python_external_scanner_create, tree_sitter_python_external_scanner_scan,
                      tree_sitter_python_external_scanner_destroy);
  size_t upstream = reads(tree_sitter_python_upstream_external_scanner_create,
                          tree_sitter_python_upstream_external_scanner_scan,
                          tree_sitter_python_upstream_external_scanner_destroy);
  EXPECT_LE(ours, 2u);
  EXPECT_GT(upstream, text.size() / 2);
}

// The fix: the scanner's "inside an f-string" flag is part of the state a parse starts from.
// The grammar as fetched kept it from the previous parse, so after a file ending in `f"{y` the
// next file's `z = 2` was read as part of the if-block above it, with the tree-sitter runtime
// trainlint used to link (0.20.7). The runtime compiled in now (cmake/Grammars.cmake) creates the
// scanner afresh for each parse, so the grammar as fetched no longer shows it between parses; the
// fix stays for the empty state deserialised within a parse.
TEST(PythonScanner, AParserReusedAfterAnUnterminatedFStringParsesTheNextFileAfresh) {
  const std::string before = "x = f\"{y", next = "if x:\n    y = 1\nz = 2\n";
  auto reused = [&](const TSLanguage* lang) {
    TSParser* p = ts_parser_new();
    ts_parser_set_language(p, lang);
    ts_tree_delete(ts_parser_parse_string(p, nullptr, before.data(), static_cast<uint32_t>(before.size())));
    ts_parser_reset(p);
    TSTree* t = ts_parser_parse_string(p, nullptr, next.data(), static_cast<uint32_t>(next.size()));
    auto sig = signature_of(t);
    ts_tree_delete(t);
    ts_parser_delete(p);
    return sig;
  };
  EXPECT_EQ(first_difference(reused(tree_sitter_python()), signature(tree_sitter_python(), next)), "");
  EXPECT_EQ(first_difference(reused(tree_sitter_python_upstream()), signature(tree_sitter_python(), next)), "");
  // trainlint's own parse, on this thread's parser, after the same file
  tl::SourceFile a("a.py", before), b("b.py", next);
  (void)tl::py::Tree::parse(a);
  tl::py::Tree after = tl::py::Tree::parse(b);
  tl::py::Tree fresh;
  std::thread([&] { fresh = tl::py::Tree::parse(b); }).join();  // a thread's first parser
  EXPECT_EQ(tl::test::tree_difference(after, fresh), "");
  EXPECT_TRUE(after.errors().empty());
}

// What the change is for: the comment lines of a long block at the class's depth are the class
// body's children, and the method after them is still in the class.
TEST(PythonScanner, ALongCommentBlockStaysInsideItsClass) {
  auto text_of = [](size_t lines) {
    return "class C:\n    def f(self):\n        return 1\n" + comment_block(lines, 4) + "    def g(self):\n        return 2\n";
  };
  EXPECT_EQ(difference(text_of(300)), "");  // the upstream scanner alone would take seconds on 3,000
  const std::string text = text_of(3000);
  TSParser* p = ts_parser_new();
  ts_parser_set_language(p, tree_sitter_python());
  TSTree* tree = ts_parser_parse_string(p, nullptr, text.data(), static_cast<uint32_t>(text.size()));
  TSNode root = ts_tree_root_node(tree);
  ASSERT_FALSE(ts_node_has_error(root));
  ASSERT_EQ(ts_node_named_child_count(root), 1u);
  TSNode body = ts_node_child_by_field_name(ts_node_named_child(root, 0), "body", 4);
  ASSERT_FALSE(ts_node_is_null(body));
  uint32_t comments = 0, defs = 0;
  for (uint32_t i = 0; i < ts_node_named_child_count(body); ++i) {
    std::string type = ts_node_type(ts_node_named_child(body, i));
    comments += type == "comment";
    defs += type == "function_definition";
  }
  EXPECT_EQ(comments, 3000u);
  EXPECT_EQ(defs, 2u);
  ts_tree_delete(tree);
  ts_parser_delete(p);
}

}  // namespace
