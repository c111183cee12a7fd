#include "analyzer/core/finding.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>
#include <unordered_map>

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

void compute_fingerprints(std::vector<Finding>& findings, const std::vector<const SourceFile*>& files) {
  std::unordered_map<std::string_view, const SourceFile*> by_path;
  for (auto* f : files) by_path[f->path()] = f;
  std::map<uint64_t, int> seen;
  for (auto& fd : findings) {
    std::string line;
    if (auto it = by_path.find(fd.path); it != by_path.end()) {
      for (char c : it->second->line_text(fd.range.start.line))
        if (c != ' ' && c != '\t') line.push_back(c);
    }
    uint64_t h = fnv1a(fd.code);
    h = fnv1a("\x1f", h);
    h = fnv1a(fd.path, h);
    h = fnv1a("\x1f", h);
    h = fnv1a(fd.scope, h);
    h = fnv1a("\x1f", h);
    h = fnv1a(line, h);
    int occurrence = seen[h]++;
    h = fnv1a(std::to_string(occurrence), h);
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    fd.fingerprint = buf;
  }
}

}  // namespace tl
