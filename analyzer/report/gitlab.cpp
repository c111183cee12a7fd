// GitLab Code Quality report (artifacts:reports:codequality): a JSON array of issues, the subset
// of the Code Climate spec that GitLab reads. See docs/output-formats.md.
#include <cstdio>
#include <set>
#include <string>

#include "analyzer/report/locate.h"
#include "analyzer/report/report.h"

namespace tl::report {
namespace {

using nlohmann::json;

std::string_view severity(Severity s) {
  switch (s) {
    case Severity::Error: return "critical";
    case Severity::Warning: return "major";
    case Severity::Info: return "minor";
  }
  return "major";
}

std::string hex64(uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

uint64_t fnv1a(std::string_view s, uint64_t h = 14695981039346656037ull) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

// GitLab keys issues by fingerprint (equal fingerprints collapse into one, and comparing the
// fingerprints of two pipelines tells new issues from fixed ones), so every issue in the report
// needs its own. trainlint's fingerprint is already unique per finding and stable across code
// motion; a repeat (findings built elsewhere, or two with no fingerprint) gets a derived one that
// depends only on the base and how many times it was seen before.
class Fingerprints {
 public:
  std::string take(std::string base) {
    std::string fp = base;
    for (int n = 1; used_.count(fp); ++n) fp = hex64(fnv1a(base + "#" + std::to_string(n)));
    used_.insert(fp);
    return fp;
  }

 private:
  std::set<std::string> used_;
};

json issue(std::string description, std::string check_name, std::string fingerprint, std::string_view sev,
           const std::string& path, uint32_t begin, uint32_t end, std::string_view category) {
  json lines = {{"begin", begin ? begin : 1}};
  if (end > begin) lines["end"] = end;
  return {{"description", std::move(description)},
          {"check_name", std::move(check_name)},
          {"fingerprint", std::move(fingerprint)},
          {"severity", sev},
          {"categories", json::array({category})},
          {"location", {{"path", path}, {"lines", lines}}}};
}

}  // namespace

json to_gitlab(const LintResult& res, const ReportOptions& opts) {
  SourceIndex sources(res);
  std::filesystem::path root = normal_root(opts.root);
  Fingerprints fps;
  json issues = json::array();

  for (auto& f : res.findings) {
    const SourceFile* src = sources.find(f.path);
    ShownPos start = shown_pos(src, f.range.start), stop = shown_pos(src, f.range.stop);
    std::string description = f.message + " [" + f.code + " " + f.slug + "]";
    uint32_t begin = start.line, end = stop.cell == start.cell ? stop.line : 0;
    if (start.cell) {
      // GitLab's line numbers are lines of the notebook's JSON: point at the file, and say where
      // in it at the start of the description.
      description = shown_location("", start).substr(1) + ": " + description;
      begin = 1;
      end = 0;
    }
    std::string base = f.fingerprint;
    if (base.empty()) base = hex64(fnv1a(f.code + "\x1f" + f.path + "\x1f" + f.message));
    issues.push_back(issue(std::move(description), f.code, fps.take(base), severity(f.severity), shown_path(f.path, root),
                           begin, end, rule_category(f.code).correctness ? "Bug Risk" : "Performance"));
  }

  // Problems with whole files (unreadable, syntax errors): the file was not, or not entirely,
  // analysed, which a reviewer should see next to the findings.
  for (auto& m : res.messages) {
    std::string description = m.message;
    uint32_t begin = 1;
    if (m.where && m.where->line) {
      ShownPos p = shown_pos(sources.find(m.path), *m.where);
      if (p.cell) description = shown_location("", p).substr(1) + ": " + description;
      else begin = p.line;
    }
    std::string base = hex64(fnv1a("file-message\x1f" + m.path + "\x1f" + m.message));
    issues.push_back(issue(std::move(description), "file-message", fps.take(base),
                           m.kind == FileMessage::Kind::Error ? "major" : "minor", shown_path(m.path, root), begin, 0,
                           "Bug Risk"));
  }
  return issues;
}

void write_gitlab(std::ostream& out, const LintResult& res, const ReportOptions& opts) {
  out << to_gitlab(res, opts).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

}  // namespace tl::report
