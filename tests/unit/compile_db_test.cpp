// CompileDbFinder: the nearest compile_commands.json and compile_flags.txt above a C++ file, each
// independently, memoised per folder.
#include <gtest/gtest.h>

#include "analyzer/cpp/compile_db.h"
#include "support/test_support.h"

using tl::cpp::CompileDbFinder;
using tl::test::TempDir;
using tl::test::write_file;

TEST(CompileDbFinder, NearestOfEachKindAboveTheFile) {
  TempDir t;
  const auto root = t.path / "repo";
  write_file(root / "build" / "compile_commands.json", "[]");
  write_file(root / "compile_commands.json", "[]");
  write_file(root / "src" / "compile_flags.txt", "-std=c++17\n");
  write_file(root / "src" / "models" / "net.cpp", "int main() {}\n");
  write_file(root / "tools" / "t.cpp", "int main() {}\n");
  write_file(t.path / "elsewhere" / "x.cpp", "\n");

  CompileDbFinder finder;
  const auto& net = finder.near((root / "src" / "models" / "net.cpp").string());
  EXPECT_EQ(net.commands_dir, root.string());  // not build/: only the folders on the way up
  EXPECT_EQ(net.flags_dir, (root / "src").string());
  const auto& tool = finder.near((root / "tools" / "t.cpp").string());
  EXPECT_EQ(tool.commands_dir, root.string());
  EXPECT_EQ(tool.flags_dir, "");
  const auto& other = finder.near((t.path / "elsewhere" / "x.cpp").string());
  EXPECT_EQ(other.commands_dir, "");
  EXPECT_EQ(other.flags_dir, "");

  // memoised per folder: a database added later is not seen by the same finder, and is by a new one
  write_file(root / "src" / "models" / "compile_commands.json", "[]");
  EXPECT_EQ(finder.near((root / "src" / "models" / "net.cpp").string()).commands_dir, root.string());
  EXPECT_EQ(CompileDbFinder().near((root / "src" / "models" / "net.cpp").string()).commands_dir,
            (root / "src" / "models").string());
}
