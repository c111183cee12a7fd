// Configuration: `[tool.trainlint]` in pyproject.toml, or `.trainlint.toml` (same keys, no table
// prefix), discovered upward from each linted file (the nearest wins; `.trainlint.toml` before
// `pyproject.toml` in one folder; a pyproject.toml without `[tool.trainlint]` is not a
// configuration). `--config FILE` gives one configuration for every file; `--isolated` none.
// docs/configuration.md is the user's reference; keep them in step.
#pragma once
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analyzer/core/finding.h"
#include "analyzer/core/glob.h"

namespace tl {

// `[tool.trainlint.run]`: thresholds of `trainlint run`, in percent of step time.
struct RunSettings {
  std::optional<double> threshold;  // a finding is confirmed at or above this share (default 1)
  std::optional<double> data_stall; // TL901 (default 5)
  std::optional<double> gc_pauses;  // TL902 (default 1)
  std::optional<double> gpu_idle;   // TL903 (default 50)
  // The `trainlint run --format json --output` report that editors show beside the findings
  // (absolute; written relative to the configuration file's folder).
  std::optional<std::string> report;
};

struct PerFileIgnore {
  std::string pattern;  // as written
  GlobSet glob;
  std::vector<std::string> selectors;
};

struct Config {
  std::string path;           // the file it came from; empty for the built-in defaults
  std::filesystem::path dir;  // its folder: globs and `baseline` are relative to it
  std::optional<std::vector<std::string>> select;  // replaces the default rule set
  std::vector<std::string> extend_select, ignore;
  std::vector<PerFileIgnore> per_file_ignores;
  std::optional<std::vector<std::string>> exclude;  // replaces the default exclusions
  std::vector<std::string> extend_exclude;
  std::optional<Severity> fail_on;
  std::map<std::string, Severity> severity;  // rule code -> severity
  std::optional<std::string> baseline;       // absolute path
  std::optional<std::string> cache_dir;      // absolute path (`cache-dir`, docs/cache.md)
  RunSettings run;

  GlobSet exclude_globs;  // exclude (or the defaults) + extend-exclude, relative to `dir`
  void finish();          // computes exclude_globs
};

// The folder and file names skipped when folders are walked, unless `exclude` replaces them.
const std::vector<std::string>& default_excludes();

// Does a rule selector ("TL101", "gc-collect-per-step", a code prefix "TL1", "ALL") name a rule?
bool selector_matches(std::string_view selector, std::string_view code, std::string_view slug);

// Answers whether a selector names at least one known rule (the registry lives above core).
using SelectorCheck = std::function<bool(std::string_view)>;
// The canonical code of a rule named by code or slug, or empty.
using RuleCanon = std::function<std::string(std::string_view)>;

// Reads one configuration file. Returns nullopt and leaves `error` empty for a pyproject.toml
// with no [tool.trainlint] table; nullopt with `error` = "FILE:LINE: message" when the file is
// invalid (bad TOML, an unknown key, a wrong type, an unknown rule code): one line per mistake, in
// file order.
std::optional<Config> load_config_file(const std::filesystem::path& file, const SelectorCheck& known,
                                       const RuleCanon& canon, std::string* error);

// Finds the configuration of each folder, with caching.
class ConfigSet {
 public:
  ConfigSet(SelectorCheck known, RuleCanon canon);
  // `config_file`: --config (empty: discover); `isolated`: --isolated. False with `error` set
  // when --config cannot be read.
  bool init(const std::string& config_file, bool isolated, std::string* error);
  // The configuration governing files in `abs_dir` (absolute, lexically normal).
  const Config& for_dir(const std::filesystem::path& abs_dir);
  const Config& defaults() const { return *defaults_; }
  // Invalid configuration files met so far ("FILE:LINE: message"), each once.
  const std::vector<std::string>& errors() const { return errors_; }

 private:
  const Config* find(const std::filesystem::path& dir);
  SelectorCheck known_;
  RuleCanon canon_;
  bool isolated_ = false;
  std::unique_ptr<Config> defaults_;
  std::unique_ptr<Config> forced_;
  std::unordered_map<std::string, const Config*> by_dir_;
  std::vector<std::unique_ptr<Config>> owned_;
  std::vector<std::string> errors_;
};

// The nearest folder at or above `abs_dir` that holds pyproject.toml, .trainlint.toml,
// setup.py or .git; empty when there is none.
std::filesystem::path find_project_root(const std::filesystem::path& abs_dir);
// The same, remembering the answer for every folder it looks at in `memo` (keyed by the folder's
// path), so that the files of one tree cost a few lookups per folder, not per file and ancestor.
std::filesystem::path find_project_root(const std::filesystem::path& abs_dir,
                                        std::unordered_map<std::string, std::filesystem::path>& memo);

}  // namespace tl
