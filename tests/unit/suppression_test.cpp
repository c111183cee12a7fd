// Suppression comments: what the Python and C++ parsers read, what a suppression covers, and the
// TL001 findings and fixes for the stale ones.
#include <gtest/gtest.h>

#include "analyzer/core/suppression.h"
#include "analyzer/python/add_noqa.h"
#include "analyzer/python/ast.h"
#include "rules/registry.h"
#include "support/test_support.h"

using namespace tl;
using namespace tl::test;

namespace {

std::string canon(std::string_view s) {
  const RuleInfo* r = find_rule(s);
  return r ? std::string(r->code) : std::string();
}

std::vector<Suppression> python(const SourceFile& src) {
  py::Tree t = py::Tree::parse(src);
  std::vector<std::pair<uint32_t, uint32_t>> comments;
  for (py::NodeId n = 0; n < t.size(); ++n)
    if (t.kind(n) == py::K::Comment) comments.emplace_back(t[n].start, t[n].end);
  return parse_python_suppressions(src, comments, canon);
}

std::vector<std::string> codes_of(const Suppression& s) {
  std::vector<std::string> v;
  for (auto& c : s.codes) v.push_back(c.code.empty() ? "?" + c.written : c.code);
  return v;
}

// A finding of `code` on `line` whose statement spans [first, last].
Finding finding(const std::string& code, uint32_t line, uint32_t first = 0, uint32_t last = 0) {
  Finding f;
  f.code = code;
  f.range.start = {line, 1};
  f.range.stop = {line, 2};
  f.statement.start = {first ? first : line, 1};
  f.statement.stop = {last ? last : line, 1};
  return f;
}

std::string apply_fix(const SourceFile& src, const Finding& f) {
  EXPECT_TRUE(f.fix.has_value());
  return f.fix ? py::apply_edits(src.text(), f.fix->edits) : src.text();
}

}  // namespace

TEST(PythonSuppressions, NoqaFormsAndCase) {
  SourceFile src("t.py",
                 "gc.collect()  # noqa\n"
                 "gc.collect()  # NOQA: tl101\n"
                 "gc.collect()  # noqa:TL101,TL105\n"
                 "gc.collect()  # noqa: TL101 TL105 because the allocator leaks\n"
                 "x = 1  # noqa: E501\n"
                 "y = 2  # noqa: E501, TL105\n"
                 "z = 3  # noqaxyz\n"
                 "gc.collect()  # noqa: gc-collect-per-step\n");
  auto s = python(src);
  ASSERT_EQ(s.size(), 6u);
  EXPECT_EQ(codes_of(s[5]), std::vector<std::string>{"TL101"}) << "a slug is a code, not a blanket noqa";
  EXPECT_FALSE(s[5].all);
  EXPECT_TRUE(s[0].all);
  EXPECT_EQ(s[0].syntax, Suppression::Syntax::Noqa);
  EXPECT_EQ(codes_of(s[1]), std::vector<std::string>{"TL101"});
  EXPECT_EQ(codes_of(s[2]), (std::vector<std::string>{"TL101", "TL105"}));
  EXPECT_EQ(codes_of(s[3]), (std::vector<std::string>{"TL101", "TL105"}));
  // `# noqa: E501` is flake8's alone: not a suppression of ours (and never blanket)
  EXPECT_EQ(s[4].line, 6u);
  EXPECT_EQ(codes_of(s[4]), std::vector<std::string>{"TL105"});
  EXPECT_EQ(s[4].foreign.size(), 1u);
}

TEST(PythonSuppressions, TrainlintIgnoreFormsAndSlugs) {
  SourceFile src("t.py",
                 "# trainlint: ignore-file[TL201]\n"
                 "a()  # trainlint: ignore\n"
                 "b()  # trainlint: ignore[TL101, host-sync-per-step]\n"
                 "c()  # trainlint:ignore[ TL999 ]\n"
                 "d()  # TRAINLINT: IGNORE-FILE\n"
                 "e()  # trainlint: ignored[TL101]\n");
  auto s = python(src);
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s[0].kind, Suppression::Kind::File);
  EXPECT_EQ(codes_of(s[0]), std::vector<std::string>{"TL201"});
  EXPECT_TRUE(s[1].all);
  EXPECT_EQ(s[1].kind, Suppression::Kind::Line);
  EXPECT_EQ(codes_of(s[2]), (std::vector<std::string>{"TL101", "TL105"}));
  EXPECT_EQ(codes_of(s[3]), std::vector<std::string>{"?TL999"});
  EXPECT_EQ(s[4].kind, Suppression::Kind::File);
  EXPECT_TRUE(s[4].all);
}

TEST(PythonSuppressions, HashInsideAStringIsNoComment) {
  SourceFile src("t.py",
                 "print(\"# noqa: TL106\")\n"
                 "s = '''\n# trainlint: ignore-file\n'''\n"
                 "f = f\"{x}  # noqa\"  # a real comment\n");
  EXPECT_TRUE(python(src).empty());
}

TEST(PythonSuppressions, CoversTheStatementsFirstAndLastLineOnly) {
  SourceFile src("t.py",
                 "loader = DataLoader(  # noqa: TL201\n"
                 "    ds,\n"
                 "    num_workers=0,  # noqa: TL202\n"
                 ")  # trainlint: ignore[TL203]\n");
  auto s = python(src);
  ASSERT_EQ(s.size(), 3u);
  for (const char* code : {"TL201", "TL203"}) {
    auto copy = s;
    EXPECT_TRUE(apply_suppressions(copy, finding(code, 1, 1, 4))) << code;
  }
  auto copy = s;
  EXPECT_FALSE(apply_suppressions(copy, finding("TL202", 1, 1, 4))) << "a middle line is not the statement's";
  EXPECT_FALSE(apply_suppressions(copy, finding("TL201", 5, 5, 5)));
}

TEST(PythonSuppressions, MarksWhatWasUsed) {
  SourceFile src("t.py", "x()  # noqa: TL101, TL105\n# trainlint: ignore-file[TL201]\n");
  auto s = python(src);
  EXPECT_TRUE(apply_suppressions(s, finding("TL105", 1)));
  EXPECT_TRUE(apply_suppressions(s, finding("TL201", 9)));
  EXPECT_FALSE(apply_suppressions(s, finding("TL102", 1)));
  EXPECT_FALSE(s[0].codes[0].used);
  EXPECT_TRUE(s[0].codes[1].used);
  EXPECT_TRUE(s[1].codes[0].used);
}

TEST(CppSuppressions, NolintForms) {
  SourceFile src("t.cpp",
                 "torch::save(model, \"m.pt\");  // NOLINT(TL103)\n"
                 "// NOLINTNEXTLINE(TL105, checkpoint-per-step)\n"
                 "auto v = loss.item<float>();\n"
                 "x();  // NOLINT\n"
                 "y();  /* NOLINT(google-explicit-constructor) */\n"
                 "z();  // NOLINT(*)\n"
                 "w();  // NOLINTBEGIN(TL103)\n"
                 "auto s = \"// NOLINT(TL101)\";\n"
                 "auto r = R\"x(// NOLINT(TL101) )\" )x\";\n"
                 "int n = 1'000; // NOLINT(TL999)\n");
  auto s = parse_cpp_suppressions(src, canon);
  ASSERT_EQ(s.size(), 5u);
  EXPECT_EQ(s[0].line, 1u);
  EXPECT_EQ(s[0].kind, Suppression::Kind::Line);
  EXPECT_EQ(codes_of(s[0]), std::vector<std::string>{"TL103"});
  EXPECT_EQ(s[1].kind, Suppression::Kind::NextLine);
  EXPECT_EQ(codes_of(s[1]), (std::vector<std::string>{"TL105", "TL103"}));
  EXPECT_TRUE(s[2].all);
  EXPECT_EQ(s[2].line, 4u);
  EXPECT_TRUE(s[3].all) << "NOLINT(*) suppresses every check";
  EXPECT_EQ(s[3].line, 6u);
  EXPECT_EQ(s[4].line, 10u) << "a digit separator is no character literal";
  EXPECT_EQ(codes_of(s[4]), std::vector<std::string>{"?TL999"});
  auto copy = s;
  EXPECT_TRUE(apply_suppressions(copy, finding("TL105", 3)));
  EXPECT_FALSE(apply_suppressions(copy, finding("TL105", 2)));
  EXPECT_TRUE(apply_suppressions(copy, finding("TL103", 1)));
}

TEST(UnusedSuppressions, MessagesAndSafeFixes) {
  SourceFile src("t.py",
                 "a()  # noqa: TL105, E501\n"
                 "b()  # trainlint: ignore[TL101, TL105]\n"
                 "c()  # trainlint: ignore\n"
                 "    # trainlint: ignore-file[TL203]\n"
                 "d()  # noqa: TL101 -- the allocator leaks\n"
                 "e()  # why: see ticket 12  # trainlint: ignore[TL999]\n"
                 "f()  # noqa\n");
  auto s = python(src);
  ASSERT_EQ(s.size(), 7u);
  apply_suppressions(s, finding("TL101", 2));  // b()'s TL101 is used
  auto judged = [](const std::string&) { return true; };
  auto out = unused_suppressions(src, s, judged);
  ASSERT_EQ(out.size(), 6u) << "the blanket # noqa is never reported";
  for (auto& f : out) {
    EXPECT_EQ(f.code, "TL001");
    EXPECT_EQ(f.severity, Severity::Info);
    ASSERT_TRUE(f.fix);
    EXPECT_EQ(f.fix->applicability, Applicability::Safe);
  }
  EXPECT_EQ(out[0].message, "unused suppression: TL105 has no finding to suppress on this line");
  EXPECT_EQ(out[0].range.start.line, 1u);
  EXPECT_EQ(out[0].range.start.col, 14u);
  std::string t = apply_fix(src, out[0]);
  EXPECT_EQ(t.substr(0, t.find('\n')), "a()  # noqa: E501") << "other tools' codes stay";
  t = apply_fix(src, out[1]);
  EXPECT_EQ(t.substr(t.find('\n') + 1, t.find('\n', t.find('\n') + 1) - t.find('\n') - 1),
            "b()  # trainlint: ignore[TL101]");
  EXPECT_EQ(out[2].message, "`# trainlint: ignore` suppresses no finding on this line");
  EXPECT_EQ(apply_fix(src, out[2]).find("c()  #"), std::string::npos);
  EXPECT_NE(apply_fix(src, out[2]).find("c()\n"), std::string::npos);
  // a comment alone on its line goes with its line
  EXPECT_EQ(out[3].message, "unused suppression: TL203 has no finding to suppress in this file");
  EXPECT_EQ(apply_fix(src, out[3]).find("ignore-file"), std::string::npos);
  EXPECT_NE(apply_fix(src, out[3]).find("c()  # trainlint: ignore\nd()"), std::string::npos);
  // an explanation after the directive stays a comment
  EXPECT_NE(apply_fix(src, out[4]).find("d()  # -- the allocator leaks\n"), std::string::npos);
  EXPECT_EQ(out[5].message, "unknown rule code `TL999` (`trainlint rules --all` lists them)");
  EXPECT_NE(apply_fix(src, out[5]).find("e()  # why: see ticket 12\n"), std::string::npos);
  // every fixed text still parses
  for (auto& f : out) {
    SourceFile after("t.py", apply_fix(src, f));
    EXPECT_TRUE(py::Tree::parse(after).errors().empty()) << after.text();
  }
}

TEST(UnusedSuppressions, OnlyJudgedCodesAreReported) {
  SourceFile src("t.py", "a()  # noqa: TL101, TL105\n");
  auto s = python(src);
  auto only_101 = [](const std::string& c) { return c == "TL101"; };
  auto out = unused_suppressions(src, s, only_101);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].message, "unused suppression: TL101 has no finding to suppress on this line");
  EXPECT_EQ(apply_fix(src, out[0]), "a()  # noqa: TL105\n");
}

TEST(UnusedSuppressions, EndToEndThroughTheEngine) {
  const char* text =
      "import gc\n"
      "for batch in loader:\n"
      "    optimizer.step()\n"
      "    gc.collect()  # noqa: TL101\n"
      "    batch = None  # noqa: TL101\n";
  // TL001 is off by default
  auto r = lint_texts({{"t.py", text}});
  EXPECT_TRUE(r.findings.empty());
  r = lint_texts({{"t.py", text}}, {"TL1", "TL001"});
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].code, "TL001");
  EXPECT_EQ(r.findings[0].range.start.line, 5u);
  // a rule that did not run cannot make its code unused
  r = lint_texts({{"t.py", text}}, {"TL001"});
  EXPECT_TRUE(r.findings.empty());
}
