// The layering of docs/architecture.md, kept true: every `#include` of the repository's own
// sources (analyzer/ and rules/) points down or stays in its own directory, never up, and never
// sideways between the Python half and the C++ half. A new directory must be placed in kLayers
// (and in docs/architecture.md) before its files pass.
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>

#include "support/test_support.h"

namespace fs = std::filesystem;

namespace {

// Bottom to top, as docs/architecture.md draws them. A file belongs to the longest directory of
// the table that holds it. A file may include its own directory and any layer of a lower rank,
// except a layer of the other language's side.
struct Layer {
  std::string_view dir;
  int rank;
  std::string_view side;  // "python", "cpp", or "" for a layer both languages share
};
constexpr Layer kLayers[] = {
    {"analyzer/core/", 0, ""},          // SourceFile, Finding, RuleInfo, Config, suppressions, ...
    {"analyzer/python/", 1, "python"},  // front ends and program models
    {"analyzer/cpp/", 1, "cpp"},
    {"analyzer/cpp_clang/", 2, "cpp"},  // the typed C++ front end (Clang): facts for analyzer/cpp's model
    {"rules/python/", 2, "python"},  // one file per rule and language
    {"rules/cpp/", 2, "cpp"},
    {"rules/", 3, ""},             // the registry (one row per code) and the embedded docs
    {"analyzer/engine/", 4, ""},   // the lint run
    {"analyzer/report/", 5, ""},   // reporters: LintResult and rule metadata in, text out
    {"analyzer/runtime/", 6, ""},  // `trainlint run`
    {"analyzer/lsp/", 6, ""},      // `trainlint lsp`
    {"analyzer/cli/", 7, ""},      // main
};

const Layer* layer_of(std::string_view path) {
  const Layer* best = nullptr;
  for (const Layer& l : kLayers)
    if (path.starts_with(l.dir) && (!best || l.dir.size() > best->dir.size())) best = &l;
  return best;
}

// Why `file` may not include `target` (both paths from the repository root), or nothing.
std::optional<std::string> violation(std::string_view file, std::string_view target) {
  const Layer* from = layer_of(file);
  const Layer* to = layer_of(target);
  if (!from) return "its directory is in no layer (tests/meta/layering_test.cpp kLayers, docs/architecture.md)";
  if (!to) return "the included file is in no layer";
  if (from == to) return std::nullopt;
  if (!from->side.empty() && !to->side.empty() && from->side != to->side)
    return "points sideways, from the " + std::string(from->side) + " side to the " + std::string(to->side) + " side";
  if (to->rank >= from->rank)
    return "points up (or across the top row), from " + std::string(from->dir) + " to " + std::string(to->dir);
  return std::nullopt;
}

bool is_source(const fs::path& p) {
  static const std::set<std::string> exts = {".h", ".hpp", ".cpp", ".cc", ".cxx", ".inc"};
  return exts.count(p.extension().string()) != 0;
}

}  // namespace

TEST(MetaLayering, TheRuleTellsDownFromUpAndSideways) {
  // down, and within a directory
  EXPECT_EQ(violation("analyzer/engine/engine.cpp", "rules/registry.h"), std::nullopt);
  EXPECT_EQ(violation("rules/registry.cpp", "rules/python/rules.h"), std::nullopt);
  EXPECT_EQ(violation("rules/registry.cpp", "rules/cpp/rules.h"), std::nullopt);
  EXPECT_EQ(violation("rules/python/host_sync_per_step.cpp", "analyzer/python/model.h"), std::nullopt);
  EXPECT_EQ(violation("rules/cpp/host_sync_per_step.cpp", "analyzer/core/rule_info.h"), std::nullopt);
  EXPECT_EQ(violation("analyzer/cli/main.cpp", "analyzer/lsp/server.h"), std::nullopt);
  EXPECT_EQ(violation("analyzer/core/config.cpp", "analyzer/core/glob.h"), std::nullopt);
  // up: the ground reading the rules, a rule reading the engine, a reporter reading the CLI
  EXPECT_NE(violation("analyzer/core/config.cpp", "rules/registry.h"), std::nullopt);
  EXPECT_NE(violation("rules/python/common.h", "rules/registry.h"), std::nullopt);
  EXPECT_NE(violation("rules/registry.h", "analyzer/engine/engine.h"), std::nullopt);
  EXPECT_NE(violation("analyzer/report/json.cpp", "analyzer/cli/lint_command.h"), std::nullopt);
  EXPECT_NE(violation("analyzer/python/model.h", "rules/python/rule_context.h"), std::nullopt);
  // sideways: Python and C++ know nothing of each other below the registry
  EXPECT_NE(violation("analyzer/python/model.h", "analyzer/cpp/model.h"), std::nullopt);
  EXPECT_NE(violation("rules/python/common.h", "rules/cpp/rule_context.h"), std::nullopt);
  EXPECT_NE(violation("rules/cpp/setup_in_step.cpp", "analyzer/python/model.h"), std::nullopt);
  // across the top row: the LSP server and `trainlint run` are peers
  EXPECT_NE(violation("analyzer/lsp/server.cpp", "analyzer/runtime/run.h"), std::nullopt);
  // a directory nobody placed
  EXPECT_NE(violation("analyzer/scratch/x.cpp", "analyzer/core/finding.h"), std::nullopt);
}

// Every include of the tree, checked. An include names a file of the repository when the path
// exists from the root (the house spelling) or from the including file's folder.
TEST(MetaLayering, EveryIncludeOfTheRepositoryPointsDown) {
  const fs::path root = tl::test::source_dir();
  static const std::regex include_re(R"(^\s*#\s*include\s*[<"]([^">]+)[">])");
  size_t files = 0, includes = 0;
  for (const char* top : {"analyzer", "rules"})
    for (auto& e : fs::recursive_directory_iterator(root / top)) {
      if (!e.is_regular_file() || !is_source(e.path())) continue;
      ++files;
      std::string rel = e.path().lexically_relative(root).generic_string();
      std::istringstream in(tl::test::read_file(e.path()));
      uint32_t n = 0;
      for (std::string line; std::getline(in, line);) {
        ++n;
        std::smatch m;
        if (!std::regex_search(line, m, include_re)) continue;
        fs::path target = m[1].str();
        std::string target_rel;
        if (fs::is_regular_file(root / target))
          target_rel = target.lexically_normal().generic_string();
        else if (fs::is_regular_file(e.path().parent_path() / target))
          target_rel = (e.path().parent_path() / target).lexically_relative(root).lexically_normal().generic_string();
        else
          continue;  // a system or third-party header
        ++includes;
        if (auto why = violation(rel, target_rel))
          ADD_FAILURE() << rel << ":" << n << ": #include \"" << m[1].str() << "\" " << *why;
      }
    }
  // the scan saw the tree (a moved root would otherwise pass with nothing checked)
  EXPECT_GT(files, 50u);
  EXPECT_GT(includes, 100u);
}

// docs/architecture.md names every layer the test enforces, so the picture a newcomer reads is
// the one the build keeps.
TEST(MetaLayering, ArchitectureDocNamesEveryLayer) {
  std::string doc = tl::test::read_file(fs::path(tl::test::source_dir()) / "docs" / "architecture.md");
  ASSERT_FALSE(doc.empty());
  for (const Layer& l : kLayers) {
    std::string dir(l.dir.substr(0, l.dir.size() - 1));  // without the trailing slash
    EXPECT_NE(doc.find(dir), std::string::npos) << "docs/architecture.md does not name " << dir;
  }
}
