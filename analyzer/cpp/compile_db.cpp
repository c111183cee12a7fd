#include "analyzer/cpp/compile_db.h"

#include <filesystem>
#include <system_error>

namespace tl::cpp {

namespace fs = std::filesystem;

const CompileDbFinder::Found& CompileDbFinder::near(const std::string& path) {
  std::error_code ec;
  fs::path abs = fs::absolute(path, ec);
  return folder((ec ? fs::path(path) : abs).parent_path().string(), 0);
}

const CompileDbFinder::Found& CompileDbFinder::folder(const std::string& dir, int depth) {
  if (auto it = by_folder_.find(dir); it != by_folder_.end()) return it->second;
  Found here;
  fs::path p(dir);
  if (!dir.empty() && depth < 128) {
    // what the parent finds, unless this folder has its own
    if (p != p.root_path() && p.has_parent_path() && p.parent_path() != p) here = folder(p.parent_path().string(), depth + 1);
    std::error_code ec;
    if (fs::is_regular_file(p / "compile_commands.json", ec)) here.commands_dir = dir;
    if (fs::is_regular_file(p / "compile_flags.txt", ec)) here.flags_dir = dir;
  }
  return by_folder_.emplace(dir, std::move(here)).first->second;
}

}  // namespace tl::cpp
