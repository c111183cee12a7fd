// What the machine-readable reporters (SARIF, GitHub, GitLab) share: paths relative to a report
// root, file URIs, a finding's position as a reader sees it (a notebook's cell and the line inside
// it), and the category of a rule. Internal to analyzer/report/, and read by the LSP server for
// the notes it writes into a message.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "analyzer/engine/engine.h"

namespace tl::report {

// The root as an absolute, lexically normal path without a trailing separator; the current
// directory when `root` is empty.
std::filesystem::path normal_root(const std::filesystem::path& root);

// `path` (absolute, or relative to the current directory) relative to `root` with '/' separators
// ("src/train.py") when it lies inside root; nullopt when it lies outside.
std::optional<std::string> path_inside(const std::string& path, const std::filesystem::path& root);

// The relative path when `path` is inside root, else its absolute path.
std::string shown_path(const std::string& path, const std::filesystem::path& root);

// Percent-encodes every byte except RFC 3986 unreserved characters and '/'. A relative URI made
// this way cannot be mistaken for one with a scheme, and spaces and non-ASCII come out as %XX.
std::string percent_encode_path(std::string_view s);

// Percent-encodes only what may never appear in a URI (spaces, controls, non-ASCII, "<>\"{}|\\^`"),
// leaving '%' escapes, reserved characters and the scheme of an already valid URI alone.
std::string encode_uri_chars(std::string_view uri);

// file:///abs/path (percent-encoded) of an absolute path; with a trailing '/' when `folder`.
std::string file_uri(const std::filesystem::path& absolute, bool folder = false);

// Finds the source text of a finding's file (for notebook cells), by path.
class SourceIndex {
 public:
  explicit SourceIndex(const LintResult& res);
  const SourceFile* find(const std::string& path) const;

 private:
  std::unordered_map<std::string, const SourceFile*> by_path_;
};

// A position as a reader sees it: in a notebook, the cell (1-based) and the line inside that cell;
// elsewhere cell 0 and the file's line. Columns are Unicode code points either way.
struct ShownPos {
  uint32_t cell = 0;
  uint32_t line = 0;
  uint32_t col = 0;
};
ShownPos shown_pos(const SourceFile* src, LineCol lc);

// "train.py:12:5" or, in a notebook, "nb.ipynb:cell 3:2:5" (ruff's notation).
std::string shown_location(const std::string& shown_path, const ShownPos& p);

// The rule family of a code, from the catalog's sections: TL1xx per-step work, TL2xx data
// pipeline, TL3xx devices and parallelism, TL4xx correctness, TL5xx missed speed-ups, TL0xx meta,
// TL9xx runtime-only. `tag` is a lowercase slug ("per-step-work"), `title` is for people.
struct RuleCategory {
  std::string_view tag;
  std::string_view title;
  bool correctness;  // TL4xx: a bug that also costs time, rather than a pure speed problem
};
RuleCategory rule_category(std::string_view code);

}  // namespace tl::report
