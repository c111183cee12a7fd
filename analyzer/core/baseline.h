// Baselines: `--write-baseline FILE` records the current findings; `--baseline FILE` (or the
// `baseline` key) then reports only findings that are not in it. A finding is identified by its
// fingerprint (rule, project-relative path, enclosing function or class, the normalised flagged
// statement, occurrence index), never by its line, so a baselined finding stays baselined when
// code moves. The file is sorted, stable JSON meant to be reviewed in a diff.
#pragma once
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace tl {

struct BaselineEntry {
  std::string path;         // relative to its project root
  std::string code;
  std::string slug;
  std::string scope;        // enclosing function or class ("" at module level)
  std::string statement;    // the flagged statement, shortened, for reviewers
  std::string fingerprint;
};

struct Baseline {
  std::vector<BaselineEntry> entries;
  // fingerprint -> how many entries carry it (normally 1)
  std::unordered_map<std::string, size_t> by_fingerprint;
};

// Reads a baseline; nullopt with `error` when the file cannot be read or is not a baseline.
std::optional<Baseline> read_baseline(const std::string& file, std::string* error);
// The file's text: version, tool and the entries sorted by path, code, scope, statement,
// fingerprint, slug; two-space indentation, one key per line, a final newline.
std::string baseline_text(std::vector<BaselineEntry> entries);
bool write_baseline(const std::string& file, const std::vector<BaselineEntry>& entries, std::string* error);

}  // namespace tl
