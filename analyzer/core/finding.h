// Finding: the one value every rule produces and every reporter consumes.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/core/source_file.h"

namespace tl {

enum class Severity : uint8_t { Info = 0, Warning = 1, Error = 2 };
std::string_view severity_name(Severity s);
std::optional<Severity> parse_severity(std::string_view s);

struct Range {
  uint32_t begin = 0, end = 0;  // byte offsets
  LineCol start, stop;          // 1-based line/column (code points)
};

struct Note {
  std::string path;
  Range range;
  std::string message;
};

struct Edit {
  Range range;
  std::string replacement;
};

// Ruff's fix applicability: `--fix` applies safe fixes, `--unsafe-fixes` also the unsafe ones (a
// fix that may change what the program does beyond removing the flagged cost). Each rule's doc
// says which, in its "Fix safety" section.
enum class Applicability : uint8_t { Safe, Unsafe };
std::string_view applicability_name(Applicability a);

struct Fix {
  std::string title;
  std::vector<Edit> edits;  // non-overlapping, byte ranges into the finding's file
  Applicability applicability = Applicability::Safe;
};

struct Finding {
  std::string code;  // TL101
  std::string slug;  // gc-collect-per-step
  Severity severity = Severity::Warning;
  std::string message;
  std::string path;
  Range range;
  std::vector<Note> notes;
  std::optional<Fix> fix;
  std::string probe;        // how the runtime shim confirms the cost (site, data-wait, ...)
  std::string scope;        // enclosing function's or class's qualified name ("" at module level)
  Range statement;          // the flagged statement (a compound statement's header only): the
                            // lines a suppression comment may sit on, what the fingerprint hashes
                            // and what --diff-base checks against changed lines
  std::string fingerprint;  // stable across code motion: see compute_fingerprints()
};

// Problems with a file as a whole: unreadable, not UTF-8, binary, syntax errors.
struct FileMessage {
  enum class Kind : uint8_t { Error, Warning } kind = Kind::Error;
  std::string path;
  std::string message;
  std::optional<LineCol> where;
};

// Sort findings by path, position, code; drop exact duplicates.
void sort_and_dedupe(std::vector<Finding>& findings);

// Fingerprints (baselines, SARIF partialFingerprints): a finding's identity that survives code
// moving. fingerprint_key() hashes the rule, the project-relative path, the enclosing function or
// class and the normalised flagged statement (comments and white space removed);
// assign_occurrences() then tells equal keys apart by their order (the first such finding in
// the file is occurrence 0, the next 1...) and writes the final 16-hex-digit fingerprint.
std::string fingerprint_key(std::string_view code, std::string_view project_path, std::string_view scope,
                            std::string_view normalized_statement);
void assign_occurrences(std::vector<Finding>& sorted_findings);

}  // namespace tl
