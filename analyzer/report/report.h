// Reporters: one file per output format. They read findings and rule metadata, never rule
// internals.
#pragma once
#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "analyzer/engine/engine.h"

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

// What the SARIF, GitHub and GitLab reporters need besides the result (docs/output-formats.md).
struct ReportOptions {
  // Paths and URIs are written relative to this folder (SARIF's %SRCROOT%, GitHub's and GitLab's
  // repository-relative paths); files outside it get absolute paths. Empty: the current directory.
  std::filesystem::path root;
  // SARIF `helpUri` of a rule = this base + the rule doc's file name ("TL101-gc-collect-per-step.md").
  // Empty: the build's TRAINLINT_HELP_URI_BASE (by default a file:// URI of the installed docs).
  std::string help_uri_base;
  // SARIF `tool.driver.informationUri`. Empty: the build's TRAINLINT_INFORMATION_URI.
  std::string information_uri;
};

// The build's defaults for the two URIs above (CMake cache variables).
std::string_view default_help_uri_base();
std::string_view default_information_uri();

// SARIF 2.1.0: one run, every rule of the registry in tool.driver.rules, results with relative
// URIs under %SRCROOT%, partialFingerprints, related locations from the notes and fixes; file
// messages become invocations[0].toolExecutionNotifications.
nlohmann::json to_sarif(const LintResult& res, const ReportOptions& opts);
void write_sarif(std::ostream& out, const LintResult& res, const ReportOptions& opts);

// GitHub Actions workflow commands, one line per finding or file message:
// `::warning file=train.py,line=19,col=13,endLine=19,endColumn=25,title=TL101 gc-collect-per-step::message`.
void write_github(std::ostream& out, const LintResult& res, const ReportOptions& opts);
// GitHub's escaping of a command's message (`%`, CR, LF) and of a property value (also `:`, `,`).
std::string github_escape_data(std::string_view s);
std::string github_escape_property(std::string_view s);

// GitLab Code Quality report: a JSON array of issues (description, check_name, fingerprint unique
// within the report, severity, location.path relative to the root, location.lines.begin).
nlohmann::json to_gitlab(const LintResult& res, const ReportOptions& opts);
void write_gitlab(std::ostream& out, const LintResult& res, const ReportOptions& opts);

// `--statistics`: findings counted per rule, most frequent first (then by code), like
// `ruff --statistics`. A fix counts when it has edits; `fixable` counts safe ones.
struct RuleStatistic {
  std::string code;
  std::string slug;
  Severity severity = Severity::Warning;  // the highest severity among the rule's findings
  size_t count = 0;
  size_t fixable = 0;         // findings with a safe fix
  size_t unsafe_fixable = 0;  // findings with an unsafe fix
};
std::vector<RuleStatistic> rule_statistics(const LintResult& res);
// `COUNT<TAB>CODE<TAB>[*] slug` lines; the `[*]`/`[-]`/`[ ]` column only when some rule has a fix.
void write_statistics_text(std::ostream& out, const LintResult& res);
// A JSON array of {code, slug, severity, count, fixable, unsafe_fixable}.
nlohmann::json statistics_to_json(const LintResult& res);

// The `--format` values, and one entry point that writes any of them.
enum class Format : uint8_t { Text, Json, Sarif, Github, Gitlab };
const std::vector<std::string>& format_names();  // "text", "json", "sarif", "github", "gitlab"
std::optional<Format> parse_format(std::string_view name);
// Text goes to `out` with file messages to `err`; every other format holds file messages itself.
void write_report(std::ostream& out, std::ostream& err, Format format, const LintResult& res,
                  const TextOptions& text, const ReportOptions& opts);

}  // namespace tl::report
