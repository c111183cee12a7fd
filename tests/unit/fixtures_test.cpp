// The two-sided fixture runner. Each tests/fixtures/python/<CODE>-<slug>.py file, and each
// <CODE>-<slug>/ folder (all its .py files analysed together as one run), is linted with only
// that rule. `# expect: TLxxx` on the line before a line demands a finding there; `# ok: TLxxx`
// demands none. Any finding without an `expect` fails the test, as does any missing one.
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>

#include "rules/registry.h"
#include "support/test_support.h"

namespace fs = std::filesystem;
using namespace tl;
using namespace tl::test;

namespace {

struct Annotation {
  std::string path;
  uint32_t line;  // the annotated code line (1-based)
  std::string code;
  bool expect;
};

// `# expect:` in Python, `// expect:` in C++ (by the file's extension).
std::vector<Annotation> parse_annotations(const std::string& path, const std::string& text) {
  bool cpp = fs::path(path).extension() != ".py";
  std::vector<std::string> lines;
  std::stringstream ss(text);
  for (std::string l; std::getline(ss, l);) lines.push_back(l);
  static const std::regex py_ann(R"(^\s*#\s*(expect|ok):\s*(.*)$)"), cpp_ann(R"(^\s*//\s*(expect|ok):\s*(.*)$)");
  const std::regex& ann = cpp ? cpp_ann : py_ann;
  std::vector<Annotation> out;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (!std::regex_match(lines[i], m, ann)) continue;
    size_t j = i + 1;
    while (j < lines.size() && std::regex_match(lines[j], ann)) ++j;
    std::string codes = m[2];
    static const std::regex code_re(R"(TL\d{3})");
    for (auto it = std::sregex_iterator(codes.begin(), codes.end(), code_re); it != std::sregex_iterator(); ++it)
      out.push_back({path, static_cast<uint32_t>(j + 1), it->str(), m[1] == "expect"});
  }
  return out;
}

struct FixtureCase {
  std::string name;  // file or folder name
  std::string code;
  std::vector<fs::path> files;
};

bool fixture_source(const fs::path& p, bool cpp) {
  std::string e = p.extension().string();
  return cpp ? (e == ".cpp" || e == ".h" || e == ".hpp" || e == ".cc") : e == ".py";
}

std::vector<FixtureCase> discover(bool cpp) {
  std::vector<FixtureCase> out;
  fs::path root = fs::path(source_dir()) / (cpp ? "tests/fixtures/cpp" : "tests/fixtures/python");
  for (auto& e : fs::directory_iterator(root)) {
    std::string name = e.path().filename().string();
    if (name.size() < 5 || name.rfind("TL", 0) != 0) continue;
    FixtureCase c{name, name.substr(0, 5), {}};
    if (e.is_directory()) {
      for (auto& f : fs::recursive_directory_iterator(e.path()))
        if (fixture_source(f.path(), cpp)) c.files.push_back(f.path());
      std::sort(c.files.begin(), c.files.end());
    } else if (fixture_source(e.path(), cpp)) {
      c.files.push_back(e.path());
    } else {
      continue;
    }
    out.push_back(std::move(c));
  }
  std::sort(out.begin(), out.end(), [](auto& a, auto& b) { return a.name < b.name; });
  return out;
}

void PrintTo(const FixtureCase& c, std::ostream* os) { *os << c.name; }

class Fixture : public ::testing::TestWithParam<FixtureCase> {};

TEST_P(Fixture, FindsExactlyTheAnnotatedCases) {
  const FixtureCase& fc = GetParam();
  const RuleEntry* rule = find_rule(fc.code);
  ASSERT_NE(rule, nullptr) << "fixture for an unknown rule: " << fc.name;
  ASSERT_TRUE(rule->implemented()) << "fixture for a rule with no implementation: " << fc.name;
  std::vector<std::pair<std::string, std::string>> files;
  std::vector<Annotation> anns;
  fs::path root = fs::path(source_dir());
  for (auto& f : fc.files) {
    std::string rel = fs::relative(f, root).generic_string();
    std::string text = read_file(f);
    files.emplace_back(rel, text);
    auto a = parse_annotations(rel, text);
    anns.insert(anns.end(), a.begin(), a.end());
  }
  // TL001 judges suppressions against the findings of the other rules: run them all, keep TL001's
  LintResult r = lint_texts(files, {fc.code == "TL001" ? std::string("ALL") : fc.code});
  if (fc.code == "TL001")
    r.findings.erase(std::remove_if(r.findings.begin(), r.findings.end(), [](const Finding& f) { return f.code != "TL001"; }),
                     r.findings.end());
  std::set<std::tuple<std::string, uint32_t>> expected, ok, found;
  for (auto& a : anns) {
    if (a.code != fc.code) continue;
    (a.expect ? expected : ok).insert({a.path, a.line});
  }
  for (auto& f : r.findings) {
    ASSERT_EQ(f.code, fc.code);
    found.insert({f.path, f.range.start.line});
  }
  for (auto& e : expected)
    EXPECT_TRUE(found.count(e)) << "missing " << fc.code << " at " << std::get<0>(e) << ":" << std::get<1>(e);
  for (auto& f : r.findings) {
    std::tuple<std::string, uint32_t> key{f.path, f.range.start.line};
    if (expected.count(key)) continue;
    ADD_FAILURE() << (ok.count(key) ? "flagged a line annotated `ok`: " : "unexpected finding: ") << f.path << ":"
                  << f.range.start.line << ":" << f.range.start.col << ": " << f.message;
  }
  for (auto& m : r.messages) ADD_FAILURE() << "fixture has a file problem: " << m.path << ": " << m.message;
}

std::string case_name(const ::testing::TestParamInfo<FixtureCase>& info) {
  std::string n = info.param.name;
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
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
