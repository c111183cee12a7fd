#include "analyzer/core/finding.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

namespace tl {

std::string_view severity_name(Severity s) {
  switch (s) {
    case Severity::Info: return "info";
    case Severity::Warning: return "warning";
    case Severity::Error: return "error";
  }
  return "warning";
}

std::string_view applicability_name(Applicability a) { return a == Applicability::Safe ? "safe" : "unsafe"; }

std::optional<Severity> parse_severity(std::string_view s) {
  if (s == "info") return Severity::Info;
  if (s == "warning") return Severity::Warning;
  if (s == "error") return Severity::Error;
  return std::nullopt;
}

void sort_and_dedupe(std::vector<Finding>& f) {
  auto key = [](const Finding& a) { return std::tie(a.path, a.range.begin, a.code, a.range.end, a.message); };
  std::sort(f.begin(), f.end(), [&](const Finding& a, const Finding& b) { return key(a) < key(b); });
  f.erase(std::unique(f.begin(), f.end(),
                      [&](const Finding& a, const Finding& b) {
                        return a.path == b.path && a.range.begin == b.range.begin && a.code == b.code;
                      }),
          f.end());
}

static uint64_t fnv1a(std::string_view s, uint64_t h = 14695981039346656037ull) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string fingerprint_key(std::string_view code, std::string_view project_path, std::string_view scope,
                            std::string_view normalized_statement) {
  uint64_t h = fnv1a(code);
  h = fnv1a("\x1f", h);
  h = fnv1a(project_path, h);
  h = fnv1a("\x1f", h);
  h = fnv1a(scope, h);
  h = fnv1a("\x1f", h);
  h = fnv1a(normalized_statement, h);
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

void assign_occurrences(std::vector<Finding>& findings) {
  // per file, as documented: the key holds the project-relative path, and two projects of one
  // run may share it (svc_a/train.py and svc_b/train.py are both "train.py"); counting across
  // them made a finding's fingerprint depend on which other files were linted with it
  std::map<std::pair<std::string, std::string>, int> seen;
  for (auto& fd : findings) {
    int occurrence = seen[{fd.path, fd.fingerprint}]++;
    uint64_t h = fnv1a(fd.fingerprint);
    h = fnv1a("\x1f", h);
    h = fnv1a(std::to_string(occurrence), h);
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    fd.fingerprint = buf;
  }
}

}  // namespace tl
