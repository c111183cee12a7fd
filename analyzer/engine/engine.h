// The lint engine: paths/buffers -> files (with their project's other files as context) ->
// ProgramModel -> rules -> per-file configuration, suppressions, TL001, fingerprints, baseline,
// --diff-base -> sorted findings. Used by the CLI, `trainlint run`, the LSP server and the tests.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/core/baseline.h"
#include "analyzer/core/config.h"
#include "analyzer/core/finding.h"
#include "analyzer/core/source_file.h"
#include "analyzer/python/model.h"

namespace tl {

struct LintOptions {
  // Rule selection on the command line: `select` replaces the configuration's (or the default)
  // set, `extend_select` adds to it, `ignore` removes from it. Codes, slugs, prefixes, ALL.
  std::vector<std::string> select;
  std::vector<std::string> extend_select;
  std::vector<std::string> ignore;
  unsigned threads = 0;             // 0 = all cores
  size_t max_file_bytes = 64u << 20;

  // Configuration: --config FILE (one configuration for every file), --isolated (none).
  std::string config_file;
  bool isolated = false;
  // Discovery.
  bool respect_gitignore = true;   // skip what .gitignore files ignore when walking folders
  bool force_exclude = false;      // apply exclude/.gitignore to paths named explicitly too
  bool project_context = true;     // analyse the other files of each file's project as context
  bool report_context = false;     // report findings in context files too (`trainlint run`)
  // Standard input: the path `-` reads `stdin_text`, linted as `stdin_filename` (which may
  // name a file of a project: the buffer then replaces that file).
  std::optional<std::string> stdin_text;
  std::string stdin_filename;
  // Texts that replace files on disk (unsaved editor buffers, --fix rounds), by absolute,
  // lexically normal path.
  std::map<std::string, std::string> overlays;
  // Shared across runs by a long-lived caller (the LSP server): re-parses become incremental.
  std::shared_ptr<py::ParseCache> parse_cache;
  // The on-disk cache (analyzer/engine/cache.h, docs/cache.md), for the command line's lint runs:
  // off unless `use_cache`; in `cache_dir`, else the root configuration's `cache-dir`, else
  // `.trainlint_cache` in the root configuration's folder (the working folder without one). Never
  // used for standard input or overlays.
  bool use_cache = false;
  std::string cache_dir;
  size_t cache_max_bytes = size_t{512} << 20;
  // Set by the engine itself: where parsed trees are kept between runs.
  py::TreeStore* tree_store = nullptr;
  // C++ files: the typed path (Clang libTooling, docs/cpp.md) on `cpp_typed` (--clang), when
  // `compile_db` names a folder with compile_commands.json (-p), or when a compile_commands.json
  // is found above a C++ file of the run, unless `cpp_fast_only` (--no-clang).
  bool cpp_typed = false;
  bool cpp_fast_only = false;
  std::string compile_db;
  // Set by the engine: where the typed path keeps its precompiled headers ("" : per run).
  std::string clang_pch_dir;
  // Only findings not in this baseline (a file written by --write-baseline).
  std::string baseline;
  // Only findings whose statement is on lines changed since this git ref.
  std::string diff_base;
};

// What the engine knows of a reported file.
struct FileInfo {
  std::string abs_path;
  std::string project_root;  // empty when the file is in no project
  // relative to the git repository's root, else to the project root ('/'-separated), else the
  // path as shown: what fingerprints and baselines name the file by
  std::string project_path;
  const Config* config = nullptr;
};

struct LintResult {
  std::vector<Finding> findings;
  std::vector<FileMessage> messages;  // unreadable, binary, not UTF-8, syntax errors...
  size_t files_analysed = 0;          // files reported on
  size_t context_files = 0;           // other files of their projects analysed as context
  bool io_error = false;              // a path given could not be read, or cannot be analysed
  std::vector<std::string> config_errors;  // invalid configuration ("FILE:LINE: message"): exit 2
  std::string usage_error;            // e.g. --diff-base outside a git repository: exit 2
  size_t baselined = 0;               // findings hidden because the baseline has them
  size_t baseline_stale = 0;          // baseline entries no current finding matches (fixed)
  size_t outside_diff = 0;            // findings hidden by --diff-base
  std::shared_ptr<py::ProgramModel> model;  // kept for callers that need sources (reporters)
  std::vector<std::shared_ptr<const SourceFile>> cpp_sources;  // the C++ files analysed, likewise
  // The files of a run answered from the on-disk cache (no model was built), likewise.
  std::vector<std::shared_ptr<const SourceFile>> cached_sources;
  std::shared_ptr<ConfigSet> configs;
  std::map<std::string, FileInfo> files;   // by display path: the reported files
  const Config* root_config = nullptr;     // global settings (fail-on, baseline, run): see docs

  const SourceFile* source(const std::string& path) const;
};

// Expands files and folders into Python files with the default exclusions (no configuration);
// for benchmarks and tools.
std::vector<std::string> discover_files(const std::vector<std::string>& paths, std::vector<FileMessage>& messages,
                                        bool& io_error);

// Reads and validates one file; null with a message when it cannot be linted.
std::unique_ptr<SourceFile> read_source(const std::string& path, size_t max_bytes, std::vector<FileMessage>& messages,
                                        bool& io_error);
// Validates text that did not come from a file (standard input, an editor buffer).
std::unique_ptr<SourceFile> source_from_text(const std::string& path, std::string text,
                                             std::vector<FileMessage>& messages);

LintResult lint_paths(const std::vector<std::string>& paths, const LintOptions& opts);

// The configuration lookup a lint run with these options uses (--config FILE, --isolated), for
// callers that need a setting outside a run (the LSP server's runtime report path). Null with
// `error` set when --config cannot be read.
std::shared_ptr<ConfigSet> make_config_set(const std::string& config_file, bool isolated, std::string* error);
// In-memory sources, all reported, default configuration, no project context.
LintResult lint_sources(std::vector<std::unique_ptr<SourceFile>> files, const LintOptions& opts);

// Is rule `code` enabled by the command line's select/ignore alone (default configuration)?
bool rule_enabled(const LintOptions& opts, std::string_view code, std::string_view slug);
// Is the rule enabled for a file governed by `config` (`rel`: its path relative to the
// configuration's folder, for per-file-ignores)?
bool rule_enabled_for(const LintOptions& opts, const Config& config, std::string_view rel, std::string_view code,
                      std::string_view slug);

// The current findings as baseline entries (for --write-baseline).
std::vector<BaselineEntry> baseline_entries(const LintResult& res);

// The flagged statement's text normalised for fingerprints: comments and white space removed.
std::string normalized_statement(const LintResult& res, const Finding& f);

}  // namespace tl
