#include <map>

#include "analyzer/report/report.h"
#include "analyzer/report/sources.h"

namespace tl::report {
namespace {

// `src` is the file the range is in when it is a notebook: lines are then the lines inside the
// cell (the object holding the range says which cell, see with_cell).
nlohmann::json range_json(const Range& r, const SourceFile* nb) {
  uint32_t start = nb ? nb->cell_line(r.start.line).line : r.start.line;
  uint32_t stop = nb ? nb->cell_line(r.stop.line).line : r.stop.line;
  return {{"start", {{"line", start}, {"column", r.start.col}}},
          {"end", {{"line", stop}, {"column", r.stop.col}}},
          {"byte_start", r.begin},
          {"byte_end", r.end}};
}

// The notebook `path` is, or null for a plain file (whose JSON stays exactly as before).
const SourceFile* notebook(const SourceIndex* sources, const std::string& path) {
  const SourceFile* src = sources ? sources->find(path) : nullptr;
  return src && src->is_notebook() ? src : nullptr;
}

nlohmann::json with_cell(nlohmann::json j, const SourceFile* nb, uint32_t line) {
  if (nb) j["cell"] = nb->cell_line(line).cell;
  return j;
}

}  // namespace

nlohmann::json finding_to_json(const Finding& f, const SourceIndex* sources) {
  const SourceFile* nb = notebook(sources, f.path);
  nlohmann::json notes = nlohmann::json::array();
  for (auto& n : f.notes) {
    const SourceFile* nnb = notebook(sources, n.path);
    notes.push_back(with_cell({{"path", n.path}, {"range", range_json(n.range, nnb)}, {"message", n.message}}, nnb,
                              n.range.start.line));
  }
  nlohmann::json fix = nullptr;
  if (f.fix) {
    nlohmann::json edits = nlohmann::json::array();
    for (auto& e : f.fix->edits)
      edits.push_back(
          with_cell({{"range", range_json(e.range, nb)}, {"replacement", e.replacement}}, nb, e.range.start.line));
    fix = {{"title", f.fix->title},
           {"applicability", std::string(applicability_name(f.fix->applicability))},
           {"edits", edits}};
  }
  return with_cell({{"code", f.code},       {"slug", f.slug},     {"severity", severity_name(f.severity)},
                    {"message", f.message}, {"path", f.path},     {"range", range_json(f.range, nb)},
                    {"notes", notes},       {"fix", fix},         {"probe", f.probe},
                    {"fingerprint", f.fingerprint}},
                   nb, f.range.start.line);
}

nlohmann::json to_json(const LintResult& res) {
  SourceIndex sources(res);
  nlohmann::json findings = nlohmann::json::array();
  std::map<std::string, size_t> by_sev{{"error", 0}, {"warning", 0}, {"info", 0}};
  for (auto& f : res.findings) {
    findings.push_back(finding_to_json(f, &sources));
    ++by_sev[std::string(severity_name(f.severity))];
  }
  nlohmann::json messages = nlohmann::json::array();
  for (auto& m : res.messages) {
    nlohmann::json j = {{"kind", m.kind == FileMessage::Kind::Error ? "error" : "warning"},
                        {"path", m.path},
                        {"message", m.message}};
    if (m.where) {
      // in an analysed notebook (a syntax error): the cell and the line inside it
      const SourceFile* nb = notebook(&sources, m.path);
      j["line"] = nb ? nb->cell_line(m.where->line).line : m.where->line;
      j["column"] = m.where->col;
      j = with_cell(std::move(j), nb, m.where->line);
    }
    messages.push_back(j);
  }
  return {{"schema_version", 1},
          {"tool", {{"name", "trainlint"}, {"version", "0.1.0"}}},
          {"findings", findings},
          {"messages", messages},
          {"summary",
           {{"files", res.files_analysed},
            {"context_files", res.context_files},
            {"findings", res.findings.size()},
            {"by_severity", by_sev},
            {"baselined", res.baselined},
            {"outside_diff", res.outside_diff}}}};
}

// A path is bytes, not always UTF-8 (a file named in Latin-1): replace what JSON cannot hold
// rather than throw and lose the report.
void write_json(std::ostream& out, const LintResult& res) {
  out << to_json(res).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

}  // namespace tl::report
