// SARIF 2.1.0 (OASIS), as GitHub code scanning and other SARIF viewers read it. Described for
// users in docs/output-formats.md; validated against the official schema by
// tests/integration/validate_sarif.py.
#include <string>
#include <string_view>

#include "analyzer/report/locate.h"
#include "analyzer/report/report.h"
#include "rules/docs.h"
#include "rules/registry.h"

#ifndef TRAINLINT_VERSION
#define TRAINLINT_VERSION "0.1.0"
#endif
#ifndef TRAINLINT_HELP_URI_BASE
#define TRAINLINT_HELP_URI_BASE "file:///usr/local/share/doc/trainlint/rules/"
#endif
#ifndef TRAINLINT_INFORMATION_URI
#define TRAINLINT_INFORMATION_URI "file:///usr/local/share/doc/trainlint/"
#endif

namespace tl::report {

std::string_view default_help_uri_base() { return TRAINLINT_HELP_URI_BASE; }
std::string_view default_information_uri() { return TRAINLINT_INFORMATION_URI; }

namespace {

using nlohmann::json;

constexpr const char* kSchemaUri = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";
constexpr const char* kRootId = "%SRCROOT%";
constexpr const char* kFingerprintKey = "trainlintFingerprint/v1";

std::string_view level(Severity s) {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Info: return "note";
  }
  return "warning";
}

// The body of a "## Title" section of a rule doc, without surrounding blank lines.
std::string_view doc_section(std::string_view doc, std::string_view title) {
  std::string head = "## " + std::string(title) + "\n";
  size_t at = doc.find(head);
  if (at == std::string_view::npos || (at > 0 && doc[at - 1] != '\n')) return {};
  std::string_view rest = doc.substr(at + head.size());
  size_t end = rest.find("\n## ");
  if (end != std::string_view::npos) rest = rest.substr(0, end + 1);
  while (!rest.empty() && (rest.front() == '\n' || rest.front() == ' ')) rest.remove_prefix(1);
  while (!rest.empty() && (rest.back() == '\n' || rest.back() == ' ')) rest.remove_suffix(1);
  return rest;
}

// Markdown wrapped at a fixed width, as plain text: the lines of a paragraph joined with spaces,
// paragraphs, list items and code blocks kept on their own lines.
std::string unwrap(std::string_view md) {
  std::string out;
  bool in_code = false, at_para_start = true;
  size_t pos = 0;
  while (pos <= md.size()) {
    size_t nl = md.find('\n', pos);
    if (nl == std::string_view::npos) nl = md.size();
    std::string_view line = md.substr(pos, nl - pos);
    pos = nl + 1;
    bool fence = line.starts_with("```");
    if (line.empty() && !in_code) {
      if (!out.empty()) out += "\n\n";
      at_para_start = true;
      continue;
    }
    bool own_line = in_code || fence || line.starts_with("- ") || line.starts_with("* ") || line.starts_with("#");
    if (!at_para_start) out += own_line ? "\n" : " ";
    out += line;
    at_para_start = false;
    if (fence) in_code = !in_code;
    if (in_code || fence) at_para_start = false;
  }
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::string_view doc_file(std::string_view code) {
  for (auto& d : rule_docs())
    if (d.code == code) return d.file;
  return {};
}

json languages(std::string_view s) {
  json out = json::array();
  size_t pos = 0;
  while (pos < s.size()) {
    size_t comma = s.find(',', pos);
    if (comma == std::string_view::npos) comma = s.size();
    std::string_view part = s.substr(pos, comma - pos);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
    if (!part.empty()) out.push_back(std::string(part));
    pos = comma + 1;
  }
  return out;
}

json rule_descriptor(const RuleEntry& r, const std::string& help_base) {
  std::string_view doc = rule_doc(r.code);
  std::string summary(r.summary);
  RuleCategory cat = rule_category(r.code);
  std::string full;
  std::string help_text;
  if (!doc.empty()) {
    full = unwrap(doc_section(doc, "What it does"));
    help_text = std::string(doc);
  }
  if (full.empty()) {
    full = summary + ".";
    if (!r.implemented())
      full += r.languages == "runtime only" ? " Reported by `trainlint run`, which measures it while the program runs."
                                            : " This rule is in the catalog but not implemented yet.";
  }
  if (help_text.empty()) help_text = "# " + std::string(r.code) + " " + std::string(r.slug) + "\n\n" + full + "\n";
  json tags = json::array({cat.correctness ? "correctness" : "performance"});
  if (std::string_view(cat.tag) == "meta") tags = json::array({"maintainability", "suppressions"});
  else if (tags[0] != cat.tag) tags.push_back(std::string(cat.tag));
  json d = {{"id", std::string(r.code)},
            {"name", std::string(r.slug)},
            {"shortDescription", {{"text", summary}}},
            {"fullDescription", {{"text", full}}},
            {"help", {{"text", help_text}, {"markdown", help_text}}},
            {"defaultConfiguration", {{"level", level(r.severity)}}},
            {"properties",
             {{"tags", tags},
              {"category", std::string(cat.title)},
              {"languages", languages(r.languages)},
              {"probe", std::string(r.probe)},
              {"implemented", r.has_check()}}}};
  if (std::string_view file = doc_file(r.code); !file.empty()) d["helpUri"] = encode_uri_chars(help_base + std::string(file));
  return d;
}

class Builder {
 public:
  Builder(const LintResult& res, const ReportOptions& opts)
      : sources_(res), root_(normal_root(opts.root)) {}

  json artifact(const std::string& path) const {
    if (auto rel = path_inside(path, root_)) return {{"uri", percent_encode_path(*rel)}, {"uriBaseId", kRootId}};
    std::error_code ec;
    auto abs = std::filesystem::absolute(path, ec).lexically_normal();
    return {{"uri", file_uri(abs)}};
  }

  // A region in the coordinates a reader sees (a notebook's cell lines); the cell, if any, in `cell`.
  json region(const SourceFile* src, const Range& r, uint32_t& cell) const {
    ShownPos a = shown_pos(src, r.start), b = shown_pos(src, r.stop);
    cell = a.cell;
    if (a.line == 0) return nullptr;
    json reg = {{"startLine", a.line}};
    if (a.col) reg["startColumn"] = a.col;
    if (b.line >= a.line && b.cell == a.cell && b.col) {
      reg["endLine"] = b.line;
      reg["endColumn"] = b.col;
    }
    return reg;
  }

  json physical(const std::string& path, const Range& r, uint32_t& cell) const {
    json p = {{"artifactLocation", artifact(path)}};
    json reg = region(sources_.find(path), r, cell);
    if (!reg.is_null()) p["region"] = reg;
    return p;
  }

  json location(const std::string& path, const Range& r) const {
    uint32_t cell = 0;
    json loc = {{"physicalLocation", physical(path, r, cell)}};
    if (cell) loc["properties"] = {{"cell", cell}};
    return loc;
  }

  json fix(const Finding& f) const {
    const SourceFile* src = sources_.find(f.path);
    json replacements = json::array();
    for (auto& e : f.fix->edits) {
      uint32_t cell = 0;
      json reg = region(src, e.range, cell);
      if (reg.is_null()) reg = json::object();
      // An insertion is an empty region: same start and end.
      if (!reg.contains("endLine") && reg.contains("startColumn")) {
        reg["endLine"] = reg["startLine"];
        reg["endColumn"] = reg["startColumn"];
      }
      if (!cell) {
        reg["byteOffset"] = e.range.begin;
        reg["byteLength"] = e.range.end >= e.range.begin ? e.range.end - e.range.begin : 0;
      }
      json rep = {{"deletedRegion", reg}, {"insertedContent", {{"text", e.replacement}}}};
      if (cell) rep["properties"] = {{"cell", cell}};
      replacements.push_back(rep);
    }
    return {{"description", {{"text", f.fix->title}}},
            {"artifactChanges", json::array({{{"artifactLocation", artifact(f.path)}, {"replacements", replacements}}})},
            {"properties", {{"applicability", std::string(applicability_name(f.fix->applicability))}}}};
  }

  json result(const Finding& f, const std::unordered_map<std::string_view, size_t>& rule_index) const {
    json r = {{"ruleId", f.code}, {"level", level(f.severity)}};
    if (auto it = rule_index.find(f.code); it != rule_index.end()) r["ruleIndex"] = it->second;
    uint32_t cell = 0;
    json loc = {{"physicalLocation", physical(f.path, f.range, cell)}};
    if (cell) loc["properties"] = {{"cell", cell}};
    r["locations"] = json::array({loc});
    std::string text = f.message;
    if (!f.notes.empty()) {
      // Embedded links "[text](id)" point at the related locations; literal brackets get escaped.
      text = escape_brackets(f.message) + " (";
      json related = json::array();
      for (size_t i = 0; i < f.notes.size(); ++i) {
        const Note& n = f.notes[i];
        std::string msg = n.message.empty() ? "related location" : n.message;
        json rl = location(n.path, n.range);
        rl["id"] = i + 1;
        rl["message"] = {{"text", msg}};
        related.push_back(rl);
        text += (i ? "; [" : "[") + escape_brackets(msg) + "](" + std::to_string(i + 1) + ")";
      }
      text += ")";
      r["relatedLocations"] = related;
    }
    r["message"] = {{"text", text}};
    if (!f.fingerprint.empty()) r["partialFingerprints"] = {{kFingerprintKey, f.fingerprint}};
    if (f.fix && !f.fix->edits.empty()) r["fixes"] = json::array({fix(f)});
    if (cell) r["properties"] = {{"cell", cell}};
    return r;
  }

  json notification(const FileMessage& m) const {
    json n = {{"level", m.kind == FileMessage::Kind::Error ? "error" : "warning"}, {"message", {{"text", m.message}}}};
    if (!m.path.empty()) {
      json phys = {{"artifactLocation", artifact(m.path)}};
      uint32_t cell = 0;
      if (m.where && m.where->line) {
        ShownPos p = shown_pos(sources_.find(m.path), *m.where);
        cell = p.cell;
        json reg = {{"startLine", p.line}};
        if (p.col) reg["startColumn"] = p.col;
        phys["region"] = reg;
      }
      json loc = {{"physicalLocation", phys}};
      if (cell) loc["properties"] = {{"cell", cell}};
      n["locations"] = json::array({loc});
    }
    return n;
  }

  const std::filesystem::path& root() const { return root_; }

 private:
  static std::string escape_brackets(std::string_view s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
      char c = s[i];
      if (c == '[' || c == ']') out.push_back('\\');
      else if (c == '\\' && i + 1 < s.size() && (s[i + 1] == '[' || s[i + 1] == ']')) out.push_back('\\');
      out.push_back(c);
    }
    return out;
  }

  SourceIndex sources_;
  std::filesystem::path root_;
};

}  // namespace

json to_sarif(const LintResult& res, const ReportOptions& opts) {
  std::string help_base = opts.help_uri_base.empty() ? std::string(default_help_uri_base()) : opts.help_uri_base;
  std::string info_uri = opts.information_uri.empty() ? std::string(default_information_uri()) : opts.information_uri;
  Builder b(res, opts);

  json rules = json::array();
  std::unordered_map<std::string_view, size_t> rule_index;
  for (auto& r : registry()) {
    rule_index.emplace(r.code, rules.size());
    rules.push_back(rule_descriptor(r, help_base));
  }
  json results = json::array();
  for (auto& f : res.findings) results.push_back(b.result(f, rule_index));
  json notifications = json::array();
  for (auto& m : res.messages) notifications.push_back(b.notification(m));

  json invocation = {{"executionSuccessful", !res.io_error}, {"toolExecutionNotifications", notifications}};
  std::error_code ec;
  if (auto cwd = std::filesystem::current_path(ec); !ec) invocation["workingDirectory"] = {{"uri", file_uri(cwd, true)}};

  json driver = {{"name", "trainlint"},
                 {"version", TRAINLINT_VERSION},
                 {"semanticVersion", TRAINLINT_VERSION},
                 {"informationUri", encode_uri_chars(info_uri)},
                 {"rules", rules}};
  json run = {{"tool", {{"driver", driver}}},
              {"originalUriBaseIds", {{kRootId, {{"uri", file_uri(b.root(), true)}}}}},
              {"columnKind", "unicodeCodePoints"},
              {"invocations", json::array({invocation})},
              {"results", results}};
  return {{"$schema", kSchemaUri}, {"version", "2.1.0"}, {"runs", json::array({run})}};
}

void write_sarif(std::ostream& out, const LintResult& res, const ReportOptions& opts) {
  out << to_sarif(res, opts).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

}  // namespace tl::report
