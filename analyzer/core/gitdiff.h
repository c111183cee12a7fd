// --diff-base REF: the lines changed since a git ref, from `git diff` (tracked files) and
// `git ls-files --others --exclude-standard` (new files count as changed throughout).
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace tl {

struct ChangedLines {
  // absolute path -> changed line ranges of the current file, [first, last], 1-based
  std::unordered_map<std::string, std::vector<std::pair<uint32_t, uint32_t>>> ranges;
  std::unordered_set<std::string> whole_files;  // untracked files
  // absolute path -> lines after which lines were only deleted (`@@ -a,b +c,0 @@`: after line c)
  std::unordered_map<std::string, std::vector<uint32_t>> deletions;

  // Do lines [first, last] of `abs` intersect a change: a new or changed line among them, or lines
  // deleted between two of them (deleting `num_workers=4,` inside a multi-line call changes it)?
  bool touches(const std::string& abs, uint32_t first, uint32_t last) const;
  // Is anything in `abs` changed?
  bool any(const std::string& abs) const {
    return whole_files.count(abs) || ranges.count(abs) || deletions.count(abs);
  }
};

// The changes since `ref` in the git repository holding `dir`. nullopt with `error` outside a
// git repository, for an unknown ref, or when git cannot be run.
std::optional<ChangedLines> changed_lines_since(const std::string& ref, const std::filesystem::path& dir,
                                                std::string* error);

// Parses `git diff --unified=0` output (paths relative to `root`) into `out`; for tests.
void parse_unified_zero_diff(const std::string& diff, const std::filesystem::path& root, ChangedLines& out);

// Runs a program (no shell) in `cwd`, capturing stdout and stderr; returns its exit status, or
// -1 with `err` set when it cannot be started.
int run_capture(const std::vector<std::string>& argv, const std::filesystem::path& cwd, std::string& out,
                std::string& err);

}  // namespace tl
