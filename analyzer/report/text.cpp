#include <map>
#include <string>

#include "analyzer/report/report.h"
#include "analyzer/report/sources.h"

namespace tl::report {
namespace {

struct Palette {
  bool on;
  const char* bold() const { return on ? "\033[1m" : ""; }
  const char* reset() const { return on ? "\033[0m" : ""; }
  const char* sev(Severity s) const {
    if (!on) return "";
    switch (s) {
      case Severity::Error: return "\033[1;31m";
      case Severity::Warning: return "\033[1;35m";
      case Severity::Info: return "\033[1;36m";
    }
    return "";
  }
  const char* note() const { return on ? "\033[1;30m" : ""; }
  const char* green() const { return on ? "\033[1;32m" : ""; }
};

// `path:line:col`, or in a notebook `path:cell C:line L:col` (L the line inside cell C).
std::string location(const std::string& path, LineCol at, const SourceFile* src) {
  if (src && src->is_notebook()) {
    CellLine cl = src->cell_line(at.line);
    return path + ":cell " + std::to_string(cl.cell) + ":line " + std::to_string(cl.line) + ":" +
           std::to_string(at.col);
  }
  return path + ":" + std::to_string(at.line) + ":" + std::to_string(at.col);
}

void source_excerpt(std::ostream& out, const SourceFile& src, const Range& r, const Palette& pal) {
  std::string_view line = src.line_text(r.start.line);
  if (line.size() > 400) return;  // minified or generated: no excerpt
  std::string num = std::to_string(src.cell_line(r.start.line).line);  // a notebook shows the cell's line
  std::string pad(num.size(), ' ');
  out << " " << num << " | ";
  for (char c : line) out << (c == '\t' ? ' ' : c);
  out << "\n " << pad << " | ";
  std::string caret(r.start.col > 0 ? r.start.col - 1 : 0, ' ');
  out << caret << pal.green() << "^";
  uint32_t len = 0;
  if (r.stop.line == r.start.line && r.stop.col > r.start.col) len = r.stop.col - r.start.col - 1;
  else {
    uint32_t line_cols = 0;
    for (unsigned char c : line)
      if ((c & 0xC0) != 0x80) ++line_cols;
    len = line_cols >= r.start.col ? line_cols - r.start.col : 0;
  }
  out << std::string(std::min<uint32_t>(len, 200), '~') << pal.reset() << "\n";
}

}  // namespace

void write_text(std::ostream& out, std::ostream& err, const LintResult& res, const TextOptions& opts) {
  Palette pal{opts.color};
  SourceIndex sources(res);
  for (auto& m : res.messages) {
    // a position in an analysed notebook (a syntax error) is in its code cells; one in a notebook
    // that could not be read (invalid JSON) is in the .ipynb file itself
    // a message about the run rather than a file (the typed C++ path missing) names the tool
    err << pal.bold()
        << (m.where ? location(m.path, *m.where, sources.find(m.path)) : m.path.empty() ? "trainlint" : m.path);
    err << ":" << pal.reset() << " " << pal.sev(m.kind == FileMessage::Kind::Error ? Severity::Error : Severity::Warning)
        << (m.kind == FileMessage::Kind::Error ? "error" : "warning") << ":" << pal.reset() << " " << m.message
        << "\n";
  }
  std::map<Severity, size_t> counts;
  for (auto& f : res.findings) {
    ++counts[f.severity];
    const SourceFile* src = sources.find(f.path);
    out << pal.bold() << location(f.path, f.range.start, src) << ":" << pal.reset() << " " << pal.sev(f.severity)
        << severity_name(f.severity) << ":" << pal.reset() << " " << pal.bold() << f.message
        << " [" << f.code << " " << f.slug << "]" << pal.reset() << "\n";
    if (opts.show_source && src) source_excerpt(out, *src, f.range, pal);
    for (auto& n : f.notes)
      out << pal.bold() << location(n.path, n.range.start, sources.find(n.path)) << ":" << pal.reset() << " "
          << pal.note() << "note:" << pal.reset() << " " << n.message << "\n";
  }
  if (opts.show_summary && !res.findings.empty()) {
    out << "\n" << res.findings.size() << (res.findings.size() == 1 ? " finding" : " findings") << " (";
    bool first = true;
    for (Severity s : {Severity::Error, Severity::Warning, Severity::Info}) {
      if (!counts[s]) continue;
      out << (first ? "" : ", ") << counts[s] << " " << severity_name(s);
      if (counts[s] > 1 && s != Severity::Info) out << "s";  // 3 warnings, 2 errors, 4 info
      first = false;
    }
    out << ") in " << res.files_analysed << (res.files_analysed == 1 ? " file" : " files")
        << ". `trainlint explain CODE` tells why each one costs GPU time.\n";
  }
}

}  // namespace tl::report
