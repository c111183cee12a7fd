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

// Fingerprint = hash(code, path, enclosing scope, the flagged line's text with whitespace
// removed, occurrence index among equal keys). It survives edits that move code up or down,
// re-indentation and changes elsewhere in the file; it changes when the flagged line changes.
void compute_fingerprints(std::vector<Finding>& findings, const std::vector<const SourceFile*>& files);

}  // namespace tl
