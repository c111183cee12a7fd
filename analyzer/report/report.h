// Reporters: one file per output format. They read findings and rule metadata, never rule
// internals.
#pragma once
#include <ostream>

#include <nlohmann/json.hpp>

#include "analyzer/core/engine.h"

namespace tl::report {

struct TextOptions {
  bool color = false;
  bool show_source = true;
  bool show_summary = true;  // the "N findings (...) in M files" line
};

// Compiler-style text: `path:line:col: warning: message [TL101 slug]`, the source line with a
// caret, then notes. File messages go to `err`.
void write_text(std::ostream& out, std::ostream& err, const LintResult& res, const TextOptions& opts);

// The stable JSON document (schema version 1, see docs/json-output.md).
class SourceIndex;

nlohmann::json to_json(const LintResult& res);
// With `sources`, a finding in a notebook gets its `cell` and lines inside the cell.
nlohmann::json finding_to_json(const Finding& f, const SourceIndex* sources = nullptr);
void write_json(std::ostream& out, const LintResult& res);

}  // namespace tl::report
