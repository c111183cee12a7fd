// The two-sided fixture runner. Each tests/fixtures/python/<CODE>-<slug>.py file, and each
// <CODE>-<slug>/ folder (all its .py files analysed together as one run), is linted with only
// that rule. `# expect: TLxxx` on the line before a line demands a finding there; `# ok: TLxxx`
// demands none. Any finding without an `expect` fails the test, as does any missing one.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>

#include "rules/registry.h"
#include "support/fixtures.h"
#include "support/test_support.h"

namespace fs = std::filesystem;
using namespace tl;
using namespace tl::test;

namespace {

class Fixture : public ::testing::TestWithParam<FixtureCase> {};

TEST_P(Fixture, FindsExactlyTheAnnotatedCases) {
  const FixtureCase& fc = GetParam();
  LoadedFixture lf = load_fixture(fc);
  if (::testing::Test::HasFatalFailure()) return;
  // TL001 judges suppressions against the findings of the other rules: run them all, keep TL001's
  LintResult r = lint_texts(lf.files, {fc.code == "TL001" ? std::string("ALL") : fc.code});
  expect_annotated(fc, lf.annotations, r, false);
}

INSTANTIATE_TEST_SUITE_P(Python, Fixture, ::testing::ValuesIn(discover(false)), case_name);
// tests/fixtures/cpp: the same runner, through the C++ fast path (one run per file or folder).
INSTANTIATE_TEST_SUITE_P(Cpp, Fixture, ::testing::ValuesIn(discover(true)), case_name);

// The annotation parser itself: stacked annotations point at the next code line.
TEST(FixtureRunner, ParsesCppAnnotations) {
  auto a = parse_annotations("x.cpp", "// expect: TL103\ntorch::save(model, p);\n# expect: TL101\n");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].line, 2u);
  EXPECT_EQ(a[0].code, "TL103");
}

TEST(FixtureRunner, ParsesStackedAnnotations) {
  auto a = parse_annotations("x.py", "import gc\n# expect: TL101\n# ok: TL103\ngc.collect()\n");
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].line, 4u);
  EXPECT_TRUE(a[0].expect);
  EXPECT_EQ(a[1].line, 4u);
  EXPECT_FALSE(a[1].expect);
}

}  // namespace
