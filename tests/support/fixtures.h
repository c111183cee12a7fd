// The fixture runner's parts shared by the fast-path runner (tests/unit/fixtures_test.cpp) and
// the typed C++ path's (tests/typed): annotations and the fixtures of tests/fixtures.
#pragma once
#include <algorithm>
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "rules/registry.h"
#include "support/test_support.h"

namespace tl::test {

struct Annotation {
  std::string path;
  uint32_t line;  // the annotated code line (1-based)
  std::string code;
  bool expect;
  bool typed_only = false;  // `// typed-expect:`: the typed C++ path must find it, the fast path may miss it
};

// `# expect:` in Python, `// expect:` in C++ (by the file's extension).
inline std::vector<Annotation> parse_annotations(const std::string& path, const std::string& text) {
  bool cpp = std::filesystem::path(path).extension() != ".py";
  std::vector<std::string> lines;
  std::stringstream ss(text);
  for (std::string l; std::getline(ss, l);) lines.push_back(l);
  static const std::regex py_ann(R"(^\s*#\s*(expect|ok):\s*(.*)$)"),
      cpp_ann(R"(^\s*//\s*(expect|ok|typed-expect):\s*(.*)$)");
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
      out.push_back({path, static_cast<uint32_t>(j + 1), it->str(), m[1] != "ok", m[1] == "typed-expect"});
  }
  return out;
}

struct FixtureCase {
  std::string name;  // file or folder name
  std::string code;
  std::vector<std::filesystem::path> files;
};

inline bool fixture_source(const std::filesystem::path& p, bool cpp) {
  std::string e = p.extension().string();
  return cpp ? (e == ".cpp" || e == ".h" || e == ".hpp" || e == ".cc") : e == ".py";
}

inline std::vector<FixtureCase> discover(bool cpp) {
  std::vector<FixtureCase> out;
  namespace fs = std::filesystem;
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

inline void PrintTo(const FixtureCase& c, std::ostream* os) { *os << c.name; }

inline std::string case_name(const ::testing::TestParamInfo<FixtureCase>& info) {
  std::string n = info.param.name;
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

struct LoadedFixture {
  std::vector<std::pair<std::string, std::string>> files;  // source-relative path, text
  std::vector<Annotation> annotations;
};

inline LoadedFixture load_fixture(const FixtureCase& fc) {
  namespace fs = std::filesystem;
  const RuleEntry* rule = find_rule(fc.code);
  EXPECT_NE(rule, nullptr) << "fixture for an unknown rule: " << fc.name;
  if (rule) EXPECT_TRUE(rule->implemented()) << "fixture for a rule with no implementation: " << fc.name;
  LoadedFixture lf;
  fs::path root = fs::path(source_dir());
  for (auto& f : fc.files) {
    std::string rel = fs::relative(f, root).generic_string();
    std::string text = read_file(f);
    lf.files.emplace_back(rel, text);
    auto a = parse_annotations(rel, text);
    lf.annotations.insert(lf.annotations.end(), a.begin(), a.end());
  }
  return lf;
}

// The findings of fixture `fc` (linted with its rule only, or TL001 judged against all) are
// exactly its `expect` lines, none on its `ok` lines; `typed-expect` lines are demanded of the
// typed path (`typed`) and allowed, not demanded, of the fast path. Any file message fails.
inline void expect_annotated(const FixtureCase& fc, const std::vector<Annotation>& anns, LintResult& r, bool typed) {
  if (fc.code == "TL001")
    r.findings.erase(std::remove_if(r.findings.begin(), r.findings.end(), [](const Finding& f) { return f.code != "TL001"; }),
                     r.findings.end());
  std::set<std::tuple<std::string, uint32_t>> expected, ok, found, typed_only;
  for (auto& a : anns) {
    if (a.code != fc.code) continue;
    (a.typed_only && !typed ? typed_only : a.expect ? expected : ok).insert({a.path, a.line});
  }
  for (auto& f : r.findings) {
    EXPECT_EQ(f.code, fc.code);
    found.insert({f.path, f.range.start.line});
  }
  for (auto& e : expected)
    EXPECT_TRUE(found.count(e)) << "missing " << fc.code << " at " << std::get<0>(e) << ":" << std::get<1>(e)
                                << (typed ? " (typed path)" : "");
  for (auto& f : r.findings) {
    std::tuple<std::string, uint32_t> key{f.path, f.range.start.line};
    if (expected.count(key) || typed_only.count(key)) continue;
    ADD_FAILURE() << (ok.count(key) ? "flagged a line annotated `ok`: " : "unexpected finding: ") << f.path << ":"
                  << f.range.start.line << ":" << f.range.start.col << ": " << f.message << (typed ? " (typed path)" : "");
  }
  for (auto& m : r.messages) ADD_FAILURE() << "fixture has a file problem: " << m.path << ": " << m.message;
}

}  // namespace tl::test
