// GitHub Actions workflow commands: printed in a workflow step, each line becomes an annotation on
// the file (and on the pull request's diff). See docs/output-formats.md.
#include <string>

#include "analyzer/report/locate.h"
#include "analyzer/report/report.h"

namespace tl::report {

std::string github_escape_data(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '%': out += "%25"; break;
      case '\r': out += "%0D"; break;
      case '\n': out += "%0A"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

std::string github_escape_property(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '%': out += "%25"; break;
      case '\r': out += "%0D"; break;
      case '\n': out += "%0A"; break;
      case ':': out += "%3A"; break;
      case ',': out += "%2C"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

namespace {

std::string_view command(Severity s) {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Info: return "notice";
  }
  return "warning";
}

struct Annotation {
  std::string_view command;
  std::string file;
  std::string title;
  std::string message;
  uint32_t line = 0, col = 0, end_line = 0, end_col = 0;
};

void emit(std::ostream& out, const Annotation& a) {
  out << "::" << a.command << " file=" << github_escape_property(a.file);
  if (a.line) {
    out << ",line=" << a.line;
    // GitHub takes columns only on a one-line annotation.
    bool one_line = a.end_line == 0 || a.end_line == a.line;
    if (a.col && one_line) out << ",col=" << a.col;
    if (a.end_line) out << ",endLine=" << a.end_line;
    if (a.end_col && one_line) out << ",endColumn=" << a.end_col;
  }
  if (!a.title.empty()) out << ",title=" << github_escape_property(a.title);
  out << "::" << github_escape_data(a.message) << "\n";
}

// "cell 3:2:5": where in a notebook, without the file.
std::string in_cell(const ShownPos& p) { return shown_location("", p).substr(1); }

}  // namespace

void write_github(std::ostream& out, const LintResult& res, const ReportOptions& opts) {
  SourceIndex sources(res);
  std::filesystem::path root = normal_root(opts.root);

  for (auto& m : res.messages) {
    Annotation a;
    a.command = m.kind == FileMessage::Kind::Error ? "error" : "warning";
    a.file = shown_path(m.path, root);
    a.title = "trainlint";
    a.message = m.message;
    if (m.where && m.where->line) {
      ShownPos p = shown_pos(sources.find(m.path), *m.where);
      if (p.cell) a.message = in_cell(p) + ": " + a.message;
      else {
        a.line = p.line;
        a.col = p.col;
      }
    }
    emit(out, a);
  }

  for (auto& f : res.findings) {
    Annotation a;
    a.command = command(f.severity);
    a.file = shown_path(f.path, root);
    a.title = f.code + " " + f.slug;
    a.message = f.message;
    const SourceFile* src = sources.find(f.path);
    ShownPos start = shown_pos(src, f.range.start), stop = shown_pos(src, f.range.stop);
    if (start.cell) {
      // A notebook's lines on GitHub are lines of its JSON, not of its cells: the annotation goes
      // on the file, and the cell and line inside it lead the message and the title.
      std::string where = in_cell(start);
      a.title += " (" + where + ")";
      a.message = where + ": " + a.message;
    } else if (start.line) {
      a.line = start.line;
      a.col = start.col;
      if (stop.line >= start.line) {
        a.end_line = stop.line;
        a.end_col = stop.col;
      }
    }
    for (auto& n : f.notes) {
      ShownPos np = shown_pos(sources.find(n.path), n.range.start);
      a.message += "\nnote: " + shown_location(shown_path(n.path, root), np) + ": " + n.message;
    }
    emit(out, a);
  }
}

}  // namespace tl::report
