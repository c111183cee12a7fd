// `trainlint --diff` on files whose names hold spaces or non-ASCII letters: the diff must apply
// with `git apply` and with GNU `patch -p1`, as the documentation promises.
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

TEST(UnifiedDiffPaths, NamesWithSpacesAndAccentsApplyWithGitAndPatch) {
  const fs::path fixture = fs::path(tl::test::source_dir()) / "tests/fixtures/fixes/TL503-set-to-none";
  const std::string before = read_file(fixture / "before.py"), after = read_file(fixture / "after.py");
  for (const char* name : {"my train.py", "exp\xc3\xa9rience 2/train loop.py", "plain/train.py"}) {
    SCOPED_TRACE(name);
    for (const char* tool : {"git apply --whitespace=nowarn -", "patch -p1 --batch --quiet"}) {
      SCOPED_TRACE(tool);
      TempDir t;
      write_file(t.path / name, before);
      CliResult d = run_cli(std::string("--diff '") + name + "'", t.path.string());
      ASSERT_EQ(d.rc, 1) << d.err;
      write_file(t.path / "fix.diff", d.out);
      std::string cmd = "cd '" + t.path.string() + "' && " + tool + " < fix.diff > log 2>&1";
      EXPECT_EQ(std::system(cmd.c_str()), 0) << d.out << read_file(t.path / "log");
      EXPECT_EQ(read_file(t.path / name), after);
    }
  }
}

}  // namespace
