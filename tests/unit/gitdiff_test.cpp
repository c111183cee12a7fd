// --diff-base: which lines changed since a ref, read from `git diff --unified=0`, whatever the
// file holds and however the user's git is configured.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <filesystem>
#include <string>

#include "analyzer/core/gitdiff.h"
#include "support/test_support.h"

namespace fs = std::filesystem;
using tl::test::CliResult;
using tl::test::run_cli;
using tl::test::TempDir;
using tl::test::write_file;

namespace {

TEST(GitDiffParse, AnAddedLineThatLooksLikeAFileHeaderIsContent) {
  // The docstring line "++ counts every step" is added: in the diff it reads "+++ counts every
  // step". The change at line 156 of the same file must still be seen.
  const std::string diff =
      "diff --git a/train.py b/train.py\n"
      "index effd8f1..50daa7a 100644\n"
      "--- a/train.py\n"
      "+++ b/train.py\n"
      "@@ -1,0 +2,3 @@\n"
      "+NOTES = \"\"\"\n"
      "+++ counts every step\n"
      "+\"\"\"\n"
      "@@ -153 +156 @@ def main():\n"
      "-                gc.collect()\n"
      "+                gc.collect()  # every step, on purpose\n"
      "diff --git a/eval.py b/eval.py\n"
      "--- a/eval.py\n"
      "+++ b/eval.py\n"
      "@@ -10,2 +10 @@ def evaluate(model):\n"
      "--- removed\n"
      "-    pass\n"
      "+    return None\n"
      "\\ No newline at end of file\n"
      "@@ -20,0 +21,2 @@\n"
      "+a = 1\n"
      "+b = 2\n";
  tl::ChangedLines cl;
  tl::parse_unified_zero_diff(diff, "/repo", cl);
  EXPECT_TRUE(cl.touches("/repo/train.py", 156, 156));
  EXPECT_TRUE(cl.touches("/repo/train.py", 3, 3));
  EXPECT_FALSE(cl.touches("/repo/train.py", 100, 150));
  EXPECT_TRUE(cl.touches("/repo/eval.py", 10, 10));
  EXPECT_TRUE(cl.touches("/repo/eval.py", 22, 22));
  EXPECT_FALSE(cl.touches("/repo/eval.py", 11, 20));
  EXPECT_EQ(cl.ranges.size(), 2u) << "no file may be made up from a content line";
}

bool sh(const std::string& cmd) {
  int status = std::system(cmd.c_str());
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// TL101 at the gc.collect() of line 15; the commit has it, the working tree changes only line 15.
const char* kTrain = R"(import gc

import torch
from torch.utils.data import DataLoader


def train(model, optimizer, dataset, epochs):
    loader = DataLoader(dataset, batch_size=64, num_workers=4, pin_memory=True, persistent_workers=True)
    for epoch in range(epochs):
        for x, y in loader:
            loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            gc.collect()
)";

struct Repo {
  TempDir t;
  fs::path root;
  explicit Repo(const std::string& file) : root(t.path / "repo") {
    fs::create_directories(root);
    EXPECT_TRUE(sh("cd '" + root.string() +
                   "' && git init -q && git config user.email dev@example.com && git config user.name dev"));
    write_file(root / file, kTrain);
    EXPECT_TRUE(sh("cd '" + root.string() + "' && git add -A && git commit -qm init"));
    std::string changed = kTrain;
    changed.replace(changed.find("gc.collect()"), 12, "gc.collect()  # per step, for now");
    write_file(root / file, changed);
  }
};

TEST(GitDiffCli, MnemonicOrNoPrefixConfigurationStillFindsTheChangedLine) {
  if (!sh("git --version >/dev/null 2>&1")) GTEST_SKIP() << "git is not installed";
  for (const char* config : {"diff.mnemonicPrefix true", "diff.noprefix true", "diff.relative true"}) {
    SCOPED_TRACE(config);
    Repo r("src/train loop.py");
    ASSERT_TRUE(sh("cd '" + r.root.string() + "' && git config " + config));
    CliResult res = run_cli("--select TL101 --diff-base HEAD -q src", r.root.string());
    EXPECT_EQ(res.rc, 1) << res.out << res.err;
    EXPECT_NE(res.out.find("src/train loop.py:15:13:"), std::string::npos) << res.out << res.err;
  }
}

TEST(GitDiffCli, AnAddedLineStartingWithPlusPlusDoesNotHideLaterChanges) {
  if (!sh("git --version >/dev/null 2>&1")) GTEST_SKIP() << "git is not installed";
  Repo r("train.py");
  std::string text = tl::test::read_file(r.root / "train.py");
  text = "NOTES = \"\"\"\n++ gc.collect() runs every step until the leak is found\n\"\"\"\n" + text;
  write_file(r.root / "train.py", text);
  CliResult res = run_cli("--select TL101 --diff-base HEAD -q train.py", r.root.string());
  EXPECT_EQ(res.rc, 1) << res.out << res.err;
  EXPECT_NE(res.out.find("train.py:18:13:"), std::string::npos) << res.out << res.err;
}

TEST(GitDiffCli, UnicodeAndSpacesFromASubfolder) {
  if (!sh("git --version >/dev/null 2>&1")) GTEST_SKIP() << "git is not installed";
  Repo r("exp\xc3\xa9riences/train loop.py");
  CliResult res = run_cli("--select TL101 --diff-base HEAD -q .", (r.root / "exp\xc3\xa9riences").string());
  EXPECT_EQ(res.rc, 1) << res.out << res.err;
  EXPECT_NE(res.out.find("train loop.py:15:13:"), std::string::npos) << res.out << res.err;
  // committed: nothing changed, nothing reported
  ASSERT_TRUE(sh("cd '" + r.root.string() + "' && git commit -qam change"));
  res = run_cli("--select TL101 --diff-base HEAD -q .", (r.root / "exp\xc3\xa9riences").string());
  EXPECT_EQ(res.rc, 0) << res.out << res.err;
}

// Two checkouts linted together (or a submodule): each file's changed lines come from its own
// repository, not from the first file's.
TEST(GitDiffCli, FilesOfTwoRepositoriesEachUseTheirOwnChanges) {
  if (!sh("git --version >/dev/null 2>&1")) GTEST_SKIP() << "git is not installed";
  Repo a("train.py"), b("train.py");
  fs::path b_moved = a.t.path / "zz_second";
  fs::rename(b.root, b_moved);
  CliResult r = run_cli("--select TL101 --diff-base HEAD -q --format json repo/train.py zz_second/train.py",
                        a.t.path.string());
  EXPECT_EQ(r.rc, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("\"repo/train.py\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"zz_second/train.py\""), std::string::npos) << r.out << r.err;
  EXPECT_EQ(r.err.find("not changed"), std::string::npos) << r.err;
}

}  // namespace
