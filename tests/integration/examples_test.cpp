// examples/: train_bad.py carries a `# TLxxx` comment on every line where a finding is intended;
// trainlint must report exactly those (for the rules implemented so far) and nothing on
// train_good.py.
#include <gtest/gtest.h>

#include <regex>

#include "rules/registry.h"
#include "support/test_support.h"

namespace fs = std::filesystem;
using namespace tl;
using namespace tl::test;

namespace {

std::set<std::pair<uint32_t, std::string>> intended(const std::string& text) {
  std::set<std::pair<uint32_t, std::string>> out;
  std::stringstream ss(text);
  static const std::regex tag(R"(#\s*(TL\d{3}(\s+TL\d{3})*)\s*$)"), code(R"(TL\d{3})");
  uint32_t n = 0;
  for (std::string l; std::getline(ss, l);) {
    ++n;
    std::smatch m;
    if (!std::regex_search(l, m, tag)) continue;
    std::string codes = m[1];
    for (auto it = std::sregex_iterator(codes.begin(), codes.end(), code); it != std::sregex_iterator(); ++it) {
      const RuleEntry* r = find_rule(it->str());
      if (r && r->python) out.insert({n, it->str()});
    }
  }
  return out;
}

// examples/cpp: `// expect: TLxxx` on the line before each intended finding.
std::set<std::pair<uint32_t, std::string>> expected_cpp(const std::string& text) {
  std::set<std::pair<uint32_t, std::string>> out;
  std::stringstream ss(text);
  static const std::regex tag(R"(^\s*//\s*expect:\s*(.*)$)"), code(R"(TL\d{3})");
  uint32_t n = 0;
  for (std::string l; std::getline(ss, l);) {
    ++n;
    std::smatch m;
    if (!std::regex_match(l, m, tag)) continue;
    std::string codes = m[1];
    for (auto it = std::sregex_iterator(codes.begin(), codes.end(), code); it != std::sregex_iterator(); ++it)
      out.insert({n + 1, it->str()});
  }
  return out;
}

}  // namespace

TEST(Examples, BadScriptHasExactlyTheIntendedFindings) {
  fs::path p = fs::path(source_dir()) / "examples/train_bad.py";
  std::string text = read_file(p);
  auto want = intended(text);
  ASSERT_GE(want.size(), 8u) << "train_bad.py should demonstrate every implemented story";
  auto r = lint_texts({{"examples/train_bad.py", text}});
  EXPECT_EQ(lines_codes(r), want);
  for (auto& f : r.findings) EXPECT_FALSE(f.fingerprint.empty());
}

TEST(Examples, GoodScriptHasNoFindings) {
  fs::path p = fs::path(source_dir()) / "examples/train_good.py";
  std::string text = read_file(p);
  EXPECT_TRUE(intended(text).empty());
  auto r = lint_texts({{"examples/train_good.py", text}});
  for (auto& f : r.findings) ADD_FAILURE() << f.path << ":" << f.range.start.line << ": " << f.code << " " << f.message;
  EXPECT_TRUE(r.messages.empty());
}

TEST(Examples, FolderRunKeepsProgramsApart) {
  // Linting the folder at once analyses both scripts as separate programs: same findings.
  // The C++ programs of examples/cpp are linted in the same run, by the C++ fast path.
  auto r = lint_paths({source_dir() + "/examples"}, LintOptions{});
  std::set<std::pair<uint32_t, std::string>> bad, bad_cpp;
  for (auto& f : r.findings) {
    bool py = f.path.find("train_bad.py") != std::string::npos, cpp = f.path.find("cpp/train_bad.cpp") != std::string::npos;
    EXPECT_TRUE(py || cpp) << f.path << ":" << f.range.start.line << ": " << f.code;
    (cpp ? bad_cpp : bad).insert({f.range.start.line, f.code});
  }
  EXPECT_EQ(bad, intended(read_file(fs::path(source_dir()) / "examples/train_bad.py")));
  EXPECT_EQ(bad_cpp, expected_cpp(read_file(fs::path(source_dir()) / "examples/cpp/train_bad.cpp")));
  EXPECT_EQ(r.files_analysed, 4u);
}

TEST(Examples, CppProgramsHaveExactlyTheExpectedFindings) {
  fs::path dir = fs::path(source_dir()) / "examples/cpp";
  auto want = expected_cpp(read_file(dir / "train_bad.cpp"));
  ASSERT_GE(want.size(), 10u);
  auto r = lint_paths({(dir / "train_bad.cpp").string()}, LintOptions{});
  EXPECT_EQ(lines_codes(r), want);
  for (auto& f : r.findings) EXPECT_FALSE(f.fingerprint.empty());
  for (auto& m : r.messages) ADD_FAILURE() << m.path << ": " << m.message;
  EXPECT_TRUE(expected_cpp(read_file(dir / "train_good.cpp")).empty());
  r = lint_paths({(dir / "train_good.cpp").string()}, LintOptions{});
  for (auto& f : r.findings) ADD_FAILURE() << f.path << ":" << f.range.start.line << ": " << f.code << " " << f.message;
  EXPECT_TRUE(r.messages.empty());
}
