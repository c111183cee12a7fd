// Where a C++ file's compile flags come from: the nearest folder at or above it that holds a
// compile_commands.json, and the nearest that holds a compile_flags.txt (clangd's and Clang
// tooling's two formats). The engine asks it whether to take the typed path and what the run's
// cache key must read; the typed front end, which database to load. No Clang needed.
#pragma once
#include <string>
#include <unordered_map>

namespace tl::cpp {

class CompileDbFinder {
 public:
  struct Found {
    std::string commands_dir;  // folder of the nearest compile_commands.json, "" when none
    std::string flags_dir;     // folder of the nearest compile_flags.txt, "" when none
  };
  // For the file at `path` (made absolute). Memoised per folder, so a run over many files in a
  // few folders asks the file system once per folder on the way up.
  const Found& near(const std::string& path);

 private:
  const Found& folder(const std::string& dir, int depth);
  std::unordered_map<std::string, Found> by_folder_;
};

}  // namespace tl::cpp
