// The lint engine: paths -> files -> ProgramModel -> rules -> filtered, sorted findings.
// Used by the CLI, the LSP server and the tests.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "analyzer/core/finding.h"
#include "analyzer/core/source_file.h"
#include "analyzer/python/model.h"

namespace tl {

struct LintOptions {
  std::vector<std::string> select;  // codes or slugs or prefixes ("TL1"); empty = all implemented
  std::vector<std::string> ignore;
  unsigned threads = 0;             // 0 = all cores
  size_t max_file_bytes = 64u << 20;
};

struct LintResult {
  std::vector<Finding> findings;
  std::vector<FileMessage> messages;  // unreadable, binary, not UTF-8, syntax errors...
  size_t files_analysed = 0;
  bool io_error = false;              // a path given could not be read at all
  std::shared_ptr<py::ProgramModel> model;  // kept for callers that need sources (reporters)
};

// Expands files and folders into Python files. Folders are walked recursively, skipping .git,
// virtual environments, node_modules, caches and build trees; symlinked folders are not followed.
std::vector<std::string> discover_files(const std::vector<std::string>& paths, std::vector<FileMessage>& messages,
                                        bool& io_error);

// Reads and validates one file; null with a message when it cannot be linted.
std::unique_ptr<SourceFile> read_source(const std::string& path, size_t max_bytes, std::vector<FileMessage>& messages,
                                        bool& io_error);

LintResult lint_paths(const std::vector<std::string>& paths, const LintOptions& opts);
LintResult lint_sources(std::vector<std::unique_ptr<SourceFile>> files, const LintOptions& opts);

// Is rule `code` enabled by select/ignore?
bool rule_enabled(const LintOptions& opts, std::string_view code, std::string_view slug);

}  // namespace tl
