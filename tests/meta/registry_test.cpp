// Meta-tests: the registry is one sorted table of unique codes, and every implemented rule has a
// doc with every section and a fixture with both kinds of annotation.
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
    for (const char* section : {"## What it does", "## Why is this bad?", "## Example", "## Use instead", "## References"}) {
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
