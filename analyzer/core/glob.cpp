#include "analyzer/core/glob.h"

namespace tl {
namespace {

// A character class at p[pi] == '['. Sets `pi` past the closing ']' and `hit` to whether `c`
// is in it. Returns false for a malformed class (no closing ']'), which then matches literally.
bool match_class(std::string_view p, size_t& pi, char c, bool& hit) {
  size_t i = pi + 1;
  bool negate = false;
  if (i < p.size() && (p[i] == '!' || p[i] == '^')) {
    negate = true;
    ++i;
  }
  bool in = false;
  bool first = true;
  while (i < p.size() && (p[i] != ']' || first)) {
    first = false;
    char lo = p[i];
    if (lo == '\\' && i + 1 < p.size()) lo = p[++i];
    char hi = lo;
    if (i + 2 < p.size() && p[i + 1] == '-' && p[i + 2] != ']') {
      hi = p[i + 2];
      if (hi == '\\' && i + 3 < p.size()) {
        hi = p[i + 3];
        ++i;
      }
      i += 2;
    }
    if (lo <= c && c <= hi) in = true;
    ++i;
  }
  if (i >= p.size()) return false;
  pi = i + 1;
  hit = in != negate;
  return true;
}

bool wm(std::string_view p, size_t pi, std::string_view s, size_t si) {
  while (pi < p.size()) {
    char pc = p[pi];
    if (pc == '*') {
      size_t after = pi;
      while (after < p.size() && p[after] == '*') ++after;
      if (after - pi >= 2 && (pi == 0 || p[pi - 1] == '/') && (after == p.size() || p[after] == '/')) {
        if (after == p.size()) return true;  // "a/**": everything below
        size_t rest = after + 1;             // "**/": zero or more whole components
        if (wm(p, rest, s, si)) return true;
        for (size_t k = si; k < s.size(); ++k)
          if (s[k] == '/' && wm(p, rest, s, k + 1)) return true;
        return false;
      }
      pi = after;  // '*' (or a '**' inside a component): any run without '/'
      for (size_t k = si;; ++k) {
        if (wm(p, pi, s, k)) return true;
        if (k >= s.size() || s[k] == '/') return false;
      }
    }
    if (si >= s.size()) return false;
    char sc = s[si];
    if (pc == '?') {
      if (sc == '/') return false;
      ++pi;
      ++si;
      continue;
    }
    if (pc == '[') {
      size_t save = pi;
      bool hit = false;
      if (match_class(p, pi, sc, hit)) {
        if (!hit || sc == '/') return false;
        ++si;
        continue;
      }
      pi = save;  // malformed: a literal '['
    }
    if (pc == '\\' && pi + 1 < p.size()) pc = p[++pi];
    if (pc != sc) return false;
    ++pi;
    ++si;
  }
  return si == s.size();
}

std::string_view basename(std::string_view rel) {
  auto slash = rel.rfind('/');
  return slash == std::string_view::npos ? rel : rel.substr(slash + 1);
}

}  // namespace

bool wildmatch(std::string_view pattern, std::string_view path) { return wm(pattern, 0, path, 0); }

bool PathPattern::parse(std::string_view line, PathPattern& out, bool gitignore_syntax) {
  out = PathPattern{};
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
  // trailing spaces are dropped unless escaped ("foo\ ")
  while (!line.empty() && line.back() == ' ' && !(line.size() >= 2 && line[line.size() - 2] == '\\'))
    line.remove_suffix(1);
  if (!gitignore_syntax)
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
  if (line.empty()) return false;
  out.text = std::string(line);
  if (line.front() == '#') return false;
  if (gitignore_syntax && line.front() == '!') {
    out.negate = true;
    line.remove_prefix(1);
  }
  if (!gitignore_syntax)
    while (line.size() >= 2 && line[0] == '.' && line[1] == '/') line.remove_prefix(2);
  if (!line.empty() && line.back() == '/') {
    out.dir_only = true;
    while (!line.empty() && line.back() == '/') line.remove_suffix(1);
  }
  if (line.find('/') != std::string_view::npos) out.anchored = true;
  while (!line.empty() && line.front() == '/') line.remove_prefix(1);
  if (line.empty()) return false;
  out.glob = std::string(line);
  return true;
}

bool PathPattern::matches(std::string_view rel, bool is_dir) const {
  if (dir_only && !is_dir) return false;
  return anchored ? wildmatch(glob, rel) : wildmatch(glob, basename(rel));
}

GlobSet::GlobSet(const std::vector<std::string>& patterns) {
  for (auto& p : patterns) {
    PathPattern pp;
    if (PathPattern::parse(p, pp, false)) patterns_.push_back(std::move(pp));
  }
}

bool GlobSet::matches(std::string_view rel, bool is_dir) const {
  if (patterns_.empty() || rel.empty()) return false;
  // every folder above `rel` (below the base), then `rel` itself
  for (size_t i = 0; i <= rel.size(); ++i) {
    if (i < rel.size() && rel[i] != '/') continue;
    std::string_view part = rel.substr(0, i);
    bool part_is_dir = i < rel.size() || is_dir;
    for (auto& p : patterns_)
      if (p.matches(part, part_is_dir)) return true;
  }
  return false;
}

}  // namespace tl
