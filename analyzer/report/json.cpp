#include <map>

#include "analyzer/report/report.h"

namespace tl::report {
namespace {

nlohmann::json range_json(const Range& r) {
  return {{"start", {{"line", r.start.line}, {"column", r.start.col}}},
          {"end", {{"line", r.stop.line}, {"column", r.stop.col}}},
          {"byte_start", r.begin},
          {"byte_end", r.end}};
}

}  // namespace

nlohmann::json finding_to_json(const Finding& f) {
  nlohmann::json notes = nlohmann::json::array();
  for (auto& n : f.notes) notes.push_back({{"path", n.path}, {"range", range_json(n.range)}, {"message", n.message}});
  nlohmann::json fix = nullptr;
  if (f.fix) {
    nlohmann::json edits = nlohmann::json::array();
    for (auto& e : f.fix->edits) edits.push_back({{"range", range_json(e.range)}, {"replacement", e.replacement}});
    fix = {{"title", f.fix->title}, {"edits", edits}};
  }
  return {{"code", f.code},         {"slug", f.slug},   {"severity", severity_name(f.severity)},
          {"message", f.message},   {"path", f.path},   {"range", range_json(f.range)},
          {"notes", notes},         {"fix", fix},       {"probe", f.probe},
          {"fingerprint", f.fingerprint}};
}

nlohmann::json to_json(const LintResult& res) {
  nlohmann::json findings = nlohmann::json::array();
  std::map<std::string, size_t> by_sev{{"error", 0}, {"warning", 0}, {"info", 0}};
  for (auto& f : res.findings) {
    findings.push_back(finding_to_json(f));
    ++by_sev[std::string(severity_name(f.severity))];
  }
  nlohmann::json messages = nlohmann::json::array();
  for (auto& m : res.messages) {
    nlohmann::json j = {{"kind", m.kind == FileMessage::Kind::Error ? "error" : "warning"},
                        {"path", m.path},
                        {"message", m.message}};
    if (m.where) {
      j["line"] = m.where->line;
      j["column"] = m.where->col;
    }
    messages.push_back(j);
  }
  return {{"schema_version", 1},
          {"tool", {{"name", "trainlint"}, {"version", "0.1.0"}}},
          {"findings", findings},
          {"messages", messages},
          {"summary", {{"files", res.files_analysed}, {"findings", res.findings.size()}, {"by_severity", by_sev}}}};
}

void write_json(std::ostream& out, const LintResult& res) { out << to_json(res).dump(2) << "\n"; }

}  // namespace tl::report
