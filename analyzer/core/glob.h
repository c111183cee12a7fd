// Glob patterns as users write them in configuration (`exclude`, `per-file-ignores`) and in
// `.gitignore` files. One matcher, gitignore's rules, so that a pattern means the same thing in
// both places.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace tl {

// Wildcard match of `pattern` against a '/'-separated path, as git's wildmatch with
// WM_PATHNAME: `*` and `?` never match '/', `[a-z]` / `[!a-z]` / `[^a-z]` / `[[:digit:]]` are
// classes, `\x` is a literal x, and `**` as a whole path component matches zero or more
// components ("a/**/b", "**/x", "a/**"). A set without its ']' or with an unknown class matches
// nothing, as in git. Linear-ish time: no pattern makes it backtrack exponentially.
bool wildmatch(std::string_view pattern, std::string_view path);

// One pattern as `.gitignore` reads it, relative to a base folder:
//   - a pattern with no '/' (other than a trailing one) matches a file or folder name at any
//     depth below the base ("*.pyc", "build", "__pycache__");
//   - a pattern with a leading or inner '/' is anchored at the base ("/data", "src/*.py");
//   - a trailing '/' matches folders only ("logs/");
//   - a leading '!' re-includes what an earlier pattern excluded (gitignore only).
struct PathPattern {
  std::string glob;        // without the leading '!', the leading '/' and the trailing '/'
  bool negate = false;
  bool dir_only = false;
  bool anchored = false;
  std::string text;        // as written, for messages
  // How matches() can test it without the matcher (set by parse()): a glob without wildcards is
  // compared whole; an unanchored "*" followed by a literal ("*.pyc") is a suffix of the name.
  enum class Shape : unsigned char { General, Literal, Suffix };
  Shape shape = Shape::General;

  // Parses one pattern; false for a blank line or a comment.
  static bool parse(std::string_view line, PathPattern& out, bool gitignore_syntax);
  // Does the pattern match `rel` (a path relative to the base, '/'-separated, no leading "./")?
  // `is_dir`: rel names a folder. Only `rel` itself is tested, not its parent folders.
  bool matches(std::string_view rel, bool is_dir) const;
};

// A list of configuration globs relative to one folder (exclude / extend-exclude). A path
// matches when it, or any folder above it below the base, matches one of them, so "data"
// excludes everything under every folder named data.
class GlobSet {
 public:
  GlobSet() = default;
  explicit GlobSet(const std::vector<std::string>& patterns);
  bool empty() const { return patterns_.empty(); }
  // `rel`: the path relative to the set's base folder; `is_dir`: whether it is a folder.
  bool matches(std::string_view rel, bool is_dir) const;
  const std::vector<PathPattern>& patterns() const { return patterns_; }

 private:
  std::vector<PathPattern> patterns_;
};

}  // namespace tl
