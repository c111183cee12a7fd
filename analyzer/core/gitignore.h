// `.gitignore` files, read as git reads them, so that a walk skips what the repository ignores:
// inside a git repository (the nearest folder above with `.git`), the patterns of
// `.git/info/exclude` and of every `.gitignore` from the repository root down to the path's
// folder apply, deeper files and later lines taking precedence, `!` re-including. Outside a git
// repository nothing is ignored (as ripgrep and ruff do). The user's global excludes file
// (`core.excludesFile`) is not read.
#pragma once
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <unordered_map>
#include <vector>

#include "analyzer/core/glob.h"

namespace tl {

// `abs` relative to `base` ('/'-separated), or empty when it is not strictly below it: a string
// prefix test, for lexically normal paths.
std::string relative_below(const std::filesystem::path& abs, const std::filesystem::path& base);

class GitIgnore {
 public:
  // Is `abs` (an absolute, lexically normal path) ignored by the patterns of its folder and the
  // folders above it? Its parent folders themselves are not tested: a walk never enters an
  // ignored folder (use ignored_or_inside_ignored() for a path named on the command line).
  bool ignored(const std::filesystem::path& abs, bool is_dir);
  // Like ignored(), and also true when a folder above `abs` (inside the repository) is ignored.
  bool ignored_or_inside_ignored(const std::filesystem::path& abs, bool is_dir);
  // The repository root of a folder (nearest ancestor holding `.git`), or empty.
  const std::filesystem::path& repo_root(const std::filesystem::path& dir);

 private:
  struct Rules {
    std::filesystem::path base;
    std::vector<PathPattern> patterns;
  };

 public:
  // What applies to the entries of one folder, worked out once for all of them (a walk asks about
  // every entry; the chain of pattern files and the paths relative to their folders are the
  // folder's): the pattern files, lowest precedence first, each with the folder's path relative
  // to the file's folder ("" for the file's own folder, else ending in '/').
  struct Folder {
    bool in_repository = false;
    std::vector<std::pair<const Rules*, std::string>> rules;
  };
  // `dir`: an absolute, lexically normal folder. The reference stays valid while this object lives.
  const Folder& folder(const std::filesystem::path& dir);
  // Is the entry `name` of that folder ignored (as ignored(dir / name, is_dir))?
  static bool ignored_in(const Folder& f, std::string_view name, bool is_dir);

 private:
  const Rules* rules_of(const std::filesystem::path& dir);  // its .gitignore, or null
  const Rules* info_exclude(const std::filesystem::path& root);
  std::unordered_map<std::string, std::unique_ptr<Rules>> gitignores_;  // by folder ("" rules: none)
  std::unordered_map<std::string, std::unique_ptr<Rules>> excludes_;    // by repository root
  std::unordered_map<std::string, std::filesystem::path> roots_;
  std::unordered_map<std::string, std::unique_ptr<Folder>> folders_;
};

}  // namespace tl
