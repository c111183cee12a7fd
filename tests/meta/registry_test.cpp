// Meta-tests: the registry is one sorted table of unique codes, and every implemented rule has a
// doc with every section and a fixture with both kinds of annotation, and each doc's "Fix safety"
// says what its findings' fixes are.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "rules/docs.h"
#include "rules/registry.h"
#include "support/test_support.h"

namespace fs = std::filesystem;
using namespace tl;

TEST(MetaRegistry, CodesAreUniqueSortedAndWellFormed) {
  std::set<std::string_view> codes, slugs;
  std::string_view prev;
  static const std::regex code_re("TL[0-9]{3}"), slug_re("[a-z0-9]+(-[a-z0-9]+)*");
  for (auto& r : registry()) {
    EXPECT_TRUE(std::regex_match(std::string(r.code), code_re)) << r.code;
    EXPECT_TRUE(std::regex_match(std::string(r.slug), slug_re)) << r.slug;
    EXPECT_TRUE(codes.insert(r.code).second) << "duplicate code " << r.code;
    EXPECT_TRUE(slugs.insert(r.slug).second) << "duplicate slug " << r.slug;
    EXPECT_LT(prev, r.code) << "registry not sorted at " << r.code;
    prev = r.code;
    EXPECT_FALSE(r.summary.empty()) << r.code;
    EXPECT_FALSE(r.probe.empty()) << r.code;
  }
  EXPECT_EQ(find_rule("TL101"), find_rule("gc-collect-per-step"));
  EXPECT_EQ(find_rule("tl101"), find_rule("TL101"));
  EXPECT_EQ(find_rule("TL999"), nullptr);
}

TEST(MetaRegistry, EveryImplementedRuleHasADocWithAllSections) {
  for (auto& r : registry()) {
    if (!r.implemented()) continue;
    std::string_view doc = rule_doc(r.code);
    ASSERT_FALSE(doc.empty()) << r.code << " has no rules/docs/" << r.code << "-" << r.slug << ".md";
    std::string title = "# " + std::string(r.code) + " " + std::string(r.slug) + "\n";
    EXPECT_EQ(doc.substr(0, title.size()), title) << r.code << ": the doc must start with `" << title << "`";
    for (const char* section : {"## What it does", "## Why is this bad?", "## Example", "## Use instead",
                                "## Fix safety", "## References"}) {
      auto at = doc.find(std::string("\n") + section + "\n");
      EXPECT_NE(at, std::string_view::npos) << r.code << " doc lacks section " << section;
      if (at == std::string_view::npos) continue;
      // the section has a body
      auto body_start = doc.find('\n', at + 1);
      auto next = doc.find("\n## ", body_start);
      std::string_view body = doc.substr(body_start, next == std::string_view::npos ? std::string_view::npos : next - body_start);
      EXPECT_NE(body.find_first_not_of(" \n\t"), std::string_view::npos) << r.code << " section " << section << " is empty";
    }
  }
}

TEST(MetaRegistry, EveryDocBelongsToARegisteredRule) {
  for (auto& d : rule_docs()) {
    const RuleInfo* r = find_rule(d.code);
    ASSERT_NE(r, nullptr) << d.file;
    EXPECT_EQ(std::string(d.file), std::string(r->code) + "-" + std::string(r->slug) + ".md");
  }
}

TEST(MetaRegistry, EveryImplementedRuleHasAFixtureWithBothAnnotations) {
  fs::path root = fs::path(test::source_dir()) / "tests/fixtures/python";
  for (auto& r : registry()) {
    if (!r.implemented()) continue;
    std::string prefix = std::string(r.code) + "-" + std::string(r.slug);
    std::string all;
    bool any = false;
    for (auto& e : fs::directory_iterator(root)) {
      std::string name = e.path().filename().string();
      if (name != prefix && name != prefix + ".py") continue;
      any = true;
      if (e.is_directory()) {
        for (auto& f : fs::recursive_directory_iterator(e.path()))
          if (f.path().extension() == ".py") all += test::read_file(f.path());
      } else {
        all += test::read_file(e.path());
      }
    }
    ASSERT_TRUE(any) << r.code << " has no fixture " << prefix << ".py or " << prefix << "/";
    EXPECT_TRUE(std::regex_search(all, std::regex("#\\s*expect:.*" + std::string(r.code)))) << r.code << " fixture has no expect";
    EXPECT_TRUE(std::regex_search(all, std::regex("#\\s*ok:.*" + std::string(r.code)))) << r.code << " fixture has no ok";
  }
}

namespace {

// The body of a doc section, or empty.
std::string_view doc_section(std::string_view doc, std::string_view section) {
  std::string head = "\n" + std::string(section) + "\n";
  auto at = doc.find(head);
  if (at == std::string_view::npos) return {};
  size_t body = at + head.size();
  auto next = doc.find("\n## ", body);
  return doc.substr(body, next == std::string_view::npos ? std::string_view::npos : next - body);
}

// The findings of rule `r` on its fixture (tests/fixtures/python/<CODE>-<slug>[.py|/]) and on its
// fix fixtures (tests/fixtures/fixes/<CODE>-*/before.py), each linted with only that rule.
std::vector<Finding> findings_on_fixtures(const RuleInfo& r) {
  fs::path root(test::source_dir());
  std::string prefix = std::string(r.code) + "-" + std::string(r.slug);
  std::vector<std::vector<std::pair<std::string, std::string>>> runs;
  for (auto& e : fs::directory_iterator(root / "tests/fixtures/python")) {
    std::string name = e.path().filename().string();
    if (name != prefix && name != prefix + ".py") continue;
    std::vector<std::pair<std::string, std::string>> files;
    if (e.is_directory()) {
      for (auto& f : fs::recursive_directory_iterator(e.path()))
        if (f.path().extension() == ".py") files.emplace_back(f.path().string(), test::read_file(f.path()));
    } else {
      files.emplace_back(e.path().string(), test::read_file(e.path()));
    }
    runs.push_back(std::move(files));
  }
  if (fs::exists(root / "tests/fixtures/fixes"))
    for (auto& e : fs::directory_iterator(root / "tests/fixtures/fixes"))
      if (e.path().filename().string().rfind(std::string(r.code) + "-", 0) == 0)
        runs.push_back({{(e.path() / "before.py").string(), test::read_file(e.path() / "before.py")}});
  std::vector<Finding> out;
  for (auto& files : runs) {
    LintResult res = test::lint_texts(files, {std::string(r.code)});
    out.insert(out.end(), res.findings.begin(), res.findings.end());
  }
  return out;
}

}  // namespace

// Every rule's doc says in "## Fix safety" whether its findings carry a fix and of which class,
// and the findings on its fixtures agree: "The fix is safe", "The fix is unsafe" or "No automatic
// fix is offered" begins the section.
TEST(MetaRegistry, FixSafetySectionMatchesTheFixesTheRuleOffers) {
  for (auto& r : registry()) {
    if (!r.python) continue;
    std::string_view body = doc_section(rule_doc(r.code), "## Fix safety");
    size_t first = body.find_first_not_of(" \n\t");
    if (first == std::string_view::npos) {
      ADD_FAILURE() << r.code << " doc lacks a `## Fix safety` section";
      continue;
    }
    body.remove_prefix(first);
    bool says_none = body.rfind("No automatic fix is offered", 0) == 0;
    bool says_safe = body.rfind("The fix is safe", 0) == 0;
    bool says_unsafe = body.rfind("The fix is unsafe", 0) == 0;
    if (!says_none && !says_safe && !says_unsafe) {
      ADD_FAILURE() << r.code << ": `## Fix safety` must begin with \"The fix is safe\", \"The fix is unsafe\" or "
                    << "\"No automatic fix is offered\"";
      continue;
    }
    size_t with_fix = 0;
    for (auto& f : findings_on_fixtures(r)) {
      if (!f.fix) continue;
      ++with_fix;
      EXPECT_FALSE(says_none) << r.code << " doc says no fix is offered, but " << f.path << ":" << f.range.start.line
                              << " carries one (" << f.fix->title << ")";
      if (says_safe)
        EXPECT_EQ(f.fix->applicability, Applicability::Safe) << r.code << ": doc says safe, " << f.path << ":"
                                                             << f.range.start.line << " has an unsafe fix";
      if (says_unsafe)
        EXPECT_EQ(f.fix->applicability, Applicability::Unsafe) << r.code << ": doc says unsafe, " << f.path << ":"
                                                               << f.range.start.line << " has a safe fix";
      EXPECT_FALSE(f.fix->edits.empty()) << r.code << ": a fix without edits at " << f.path << ":" << f.range.start.line;
    }
    if (says_safe || says_unsafe)
      EXPECT_GT(with_fix, 0u) << r.code << " doc describes a fix, but no finding on its fixtures (tests/fixtures/python, "
                              << "tests/fixtures/fixes/" << r.code << "-*/before.py) carries one";
  }
}
