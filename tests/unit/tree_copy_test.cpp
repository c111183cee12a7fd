// Both front ends copy tree-sitter's tree into their compact tree by reading the runtime's own
// subtree structures (analyzer/core/flat_tree_build.h), where the public TSTreeCursor cost 4.3
// times as much. The cursor's copy is the reference: the direct one must equal it node for node
// (byte range, parent, subtree, kind, field, named flag, symbol) and error for error, on every
// Python and C++ fixture and example, the fuzzers' seeds and regressions, and damaged copies of
// them (cut short, lines dropped, brackets and keywords removed), whose ERROR and MISSING nodes,
// aliases and inherited fields are where a restated rule of the cursor would go wrong.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "analyzer/cpp/syntax.h"
#include "analyzer/python/ast.h"
#include "tests/support/test_support.h"
#include "tests/support/tree_diff.h"

namespace fs = std::filesystem;
using namespace tl;

namespace {

// `text` and damaged copies of it: cut at a few points, every 7th line dropped, brackets and
// colons removed, a keyword doubled. The same copies every run.
std::vector<std::string> variants(const std::string& text, uint32_t seed) {
  std::vector<std::string> out{text};
  if (text.empty()) return out;
  std::mt19937 rng(seed);
  for (int i = 0; i < 3; ++i) out.push_back(text.substr(0, rng() % text.size()));
  std::string dropped;
  size_t line = 0, b = 0;
  while (b < text.size()) {
    size_t e = text.find('\n', b);
    e = e == std::string::npos ? text.size() : e + 1;
    if (line++ % 7 != 3) dropped.append(text, b, e - b);
    b = e;
  }
  out.push_back(dropped);
  for (char c : {')', ']', '}', ':', '"'}) {
    std::string s = text;
    size_t hits = 0;
    for (size_t i = 0; i < s.size(); ++i)
      if (s[i] == c && rng() % 5 == 0 && ++hits < 20) s.erase(i, 1);
    out.push_back(std::move(s));
  }
  std::string doubled = text;
  for (const char* kw : {"def ", "if ", "for ", "class ", "return "})
    if (size_t at = doubled.find(kw); at != std::string::npos) doubled.insert(at, kw);
  out.push_back(std::move(doubled));
  return out;
}

struct Tally {
  size_t texts = 0, nodes = 0, errors = 0, with_errors = 0;
};

template <class TreeT>
void compare(const fs::path& p, const std::vector<std::string>& texts, Tally& tally) {
  for (size_t v = 0; v < texts.size(); ++v) {
    SourceFile src(p.string(), texts[v]);
    TreeT direct = TreeT::parse(src);
    TreeT cursor = TreeT::parse_by_cursor(src);
    EXPECT_EQ(test::tree_difference(direct, cursor), "") << p << " variant " << v;
    ++tally.texts;
    tally.nodes += direct.size();
    tally.errors += direct.errors().size();
    tally.with_errors += direct.errors().empty() ? 0 : 1;
  }
}

}  // namespace

TEST(TreeCopy, PythonDirectCopyEqualsTheCursorsOnEveryFixtureAndItsDamagedCopies) {
  Tally t;
  uint32_t seed = 1;
  const std::vector<std::string> dirs = {"tests/fixtures/python", "tests/fixtures/fixes", "tests/fixtures/notebooks",
                                         "examples", "fuzz/regressions/python"};
  for (const auto& p : test::source_files_under(dirs, {".py", ""})) {
    std::string text = test::read_file(p);
    if (text.size() > (1u << 20)) continue;  // parsed whole here; Tree::parse cuts files over 2 MB in pieces
    compare<py::Tree>(p, variants(text, seed++), t);
  }
  // the comparison saw real trees and real error recovery
  EXPECT_GT(t.texts, 1000u);
  EXPECT_GT(t.nodes, 500000u);
  EXPECT_GT(t.with_errors, t.texts / 3) << t.with_errors << " of " << t.texts;
  EXPECT_GT(t.errors, 5000u);
}

TEST(TreeCopy, CppDirectCopyEqualsTheCursorsOnEveryFixtureAndItsDamagedCopies) {
  Tally t;
  uint32_t seed = 1;
  for (const auto& p : test::source_files_under({"tests/fixtures/cpp", "examples/cpp", "fuzz/regressions/cpp"},
                                                {".cpp", ".h", ".hpp", ".cc", ".cu", ".cuh", ""}))
    compare<cpp::syntax::Tree>(p, variants(test::read_file(p), seed++), t);
  EXPECT_GT(t.texts, 100u);
  EXPECT_GT(t.nodes, 100000u);
  EXPECT_GT(t.with_errors, t.texts / 3) << t.with_errors << " of " << t.texts;
}

// Texts written for the cursor rules the copy restates: extras (comments) between a node's
// children, which take no structural index; aliased nodes; fields inherited through hidden
// nodes; MISSING tokens, dropped (`)`) or kept; an empty file; a file that is one ERROR.
TEST(TreeCopy, TextsThatExerciseExtrasAliasesInheritedFieldsAndMissingTokens) {
  const std::vector<std::string> python = {
      "",
      "\n\n",
      "x",
      ")))",
      "def f(a, # c\n      b):  # d\n    return a  # e\n",
      "print(f'{x!r:>{w}} {y=}' 'z')\nassert x, (yield)\n",
      "match x:\n    case [1, *rest] | {'k': _} if rest:\n        pass\n",
      "foo(a,\n", "x = [1, 2\ny = 3\n", "if x\n    y\n", "class A(:\n  def f(self\n",
      "lambda: (yield)\nasync def g():\n    async with a as (b, c): await d\n",
      "type X[T] = list[T]\ndef f[T: int](x: T) -> T: ...\n",
      "import a.b as c, d\nfrom . import (e as f,\n    g)\nglobal h; nonlocal i\n",
      "x = 1 if y else \\\n  2\ndel a[1:2, ::3]\n",
  };
  Tally t;
  for (size_t i = 0; i < python.size(); ++i)
    compare<py::Tree>("text" + std::to_string(i) + ".py", variants(python[i], static_cast<uint32_t>(i)), t);
  const std::vector<std::string> cpp = {
      "",
      "int main() { return 0 }",
      "template <class T> struct S : B<T> { S() : x{1} /* c */ , y(2) {} int x, y; };\n",
      "auto f = [&](auto&& a) -> decltype(a) { return std::forward<decltype(a)>(a); };\n",
      "namespace n { enum class E : int { A = 1, B }; }\n#define M(x) x\n#if A\nint a;\n#else\nint b;\n#endif\n",
      "void g() { for (auto& [k, v] : m) { if (k) continue; } torch::Tensor t = torch::zeros({2, 3}, opts; }\n",
      "operator\"\" _x(unsigned long long); co_await x; requires C<T>;\n",
  };
  for (size_t i = 0; i < cpp.size(); ++i)
    compare<cpp::syntax::Tree>("text" + std::to_string(i) + ".cpp", variants(cpp[i], static_cast<uint32_t>(i)), t);
  EXPECT_GT(t.with_errors, 20u);
}
