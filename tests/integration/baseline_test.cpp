// Baselines on the cases found by review: which entries count as gone, malformed baseline files.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "support/test_support.h"

namespace fs = std::filesystem;
using tl::test::CliResult;
using tl::test::read_file;
using tl::test::run_cli;
using tl::test::TempDir;
using tl::test::write_file;

namespace {

bool contains(const std::string& s, const std::string& p) { return s.find(p) != std::string::npos; }

// A project whose baseline holds every finding of examples/train_bad.py.
struct BaselinedProject {
  TempDir t;
  fs::path root;
  BaselinedProject() : root(t.path / "proj") {
    write_file(root / "pyproject.toml", "[project]\nname = \"bad-trainer\"\n");
    write_file(root / "train.py", read_file(fs::path(tl::test::source_dir()) / "examples/train_bad.py"));
    CliResult w = run_cli("--write-baseline baseline.json train.py", root.string());
    EXPECT_EQ(w.rc, 0) << w.err;
  }
};

// Under --select only the selected rules run: the other entries are not gone, and the message must
// not tell the user to rewrite the baseline (which, with the same --select, would drop them).
TEST(BaselineStale, EntriesOfRulesThatDidNotRunAreNotGone) {
  BaselinedProject p;
  CliResult r = run_cli("--baseline baseline.json --select TL101 train.py", p.root.string());
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_TRUE(contains(r.err, "1 finding is in the baseline")) << r.err;
  EXPECT_FALSE(contains(r.err, "gone")) << r.err;
  r = run_cli("--baseline baseline.json --ignore TL1 train.py", p.root.string());
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_FALSE(contains(r.err, "gone")) << r.err;
}

TEST(BaselineStale, AFixedFindingIsGoneWhateverTheSelection) {
  BaselinedProject p;
  std::string text = read_file(p.root / "train.py");
  size_t at = text.find("gc.collect()  # TL101");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, std::string("gc.collect()  # TL101").size(), "pass");
  write_file(p.root / "train.py", text);
  for (const char* sel : {"", "--select TL101 "}) {
    CliResult r = run_cli(std::string("--baseline baseline.json ") + sel + "train.py", p.root.string());
    EXPECT_EQ(r.rc, 0) << r.out << r.err;
    EXPECT_TRUE(contains(r.err, "1 baselined finding is gone")) << sel << r.err;
  }
}

TEST(BaselineFile, MalformedBaselinesAreUsageErrorsWithTheirName) {
  BaselinedProject p;
  const std::pair<const char*, const char*> cases[] = {
      {"", "is not a trainlint baseline"},
      {"[1, 2]", "is not a trainlint baseline"},
      {"{\"findings\": {}}", "is not a trainlint baseline"},
      {"{\"version\": 1, \"findings\": [{\"path\": \"train.py\"}]}", "needs a \"fingerprint\" string"},
      {"{\"version\": 7, \"findings\": []}", "baseline version 7 is not supported"},
      {"\xff\xfe{\x00", "is not a trainlint baseline"},
  };
  for (auto& [text, message] : cases) {
    write_file(p.root / "bad.json", text);
    CliResult r = run_cli("--baseline bad.json train.py", p.root.string());
    EXPECT_EQ(r.rc, 2) << text;
    EXPECT_TRUE(contains(r.err, "bad.json")) << r.err;
    EXPECT_TRUE(contains(r.err, message)) << text << "\n" << r.err;
  }
  CliResult r = run_cli("--baseline missing.json train.py", p.root.string());
  EXPECT_EQ(r.rc, 2);
  EXPECT_TRUE(contains(r.err, "cannot read the baseline missing.json")) << r.err;
}

}  // namespace
