#include "analyzer/core/glob.h"

#include <cctype>
#include <cstdint>
#include <optional>

namespace tl {
namespace {

// git's wildmatch (wildmatch.c, dowild) with WM_PATHNAME, line for line where it matters. The
// two abort results are what keep it linear on patterns like "*a*a*a*a*b": when the text runs
// out, no later position of an earlier '*' can help (AbortAll), and a '*' that cannot cross a '/'
// hands back to the enclosing "**" (AbortToStarStar).
enum class Wm : uint8_t { Match, NoMatch, AbortAll, AbortToStarStar };

bool glob_special(char c) { return c == '*' || c == '?' || c == '[' || c == '\\'; }

// A POSIX class name ("alpha") holds byte c; nullopt for an unknown name.
std::optional<bool> posix_class(std::string_view name, unsigned char c) {
  if (name == "alnum") return std::isalnum(c) != 0;
  if (name == "alpha") return std::isalpha(c) != 0;
  if (name == "blank") return c == ' ' || c == '\t';
  if (name == "cntrl") return std::iscntrl(c) != 0;
  if (name == "digit") return std::isdigit(c) != 0;
  if (name == "graph") return std::isgraph(c) != 0;
  if (name == "lower") return std::islower(c) != 0;
  if (name == "print") return std::isprint(c) != 0;
  if (name == "punct") return std::ispunct(c) != 0;
  if (name == "space") return std::isspace(c) != 0;
  if (name == "upper") return std::isupper(c) != 0;
  if (name == "xdigit") return std::isxdigit(c) != 0;
  return std::nullopt;
}

Wm dowild(std::string_view p, size_t pi, std::string_view s, size_t si) {
  auto at = [](std::string_view v, size_t i) -> unsigned char { return i < v.size() ? static_cast<unsigned char>(v[i]) : 0; };
  for (; pi < p.size(); ++pi, ++si) {
    unsigned char pc = at(p, pi), tc = at(s, si);
    if (si >= s.size() && pc != '*') return Wm::AbortAll;
    switch (pc) {
      case '\\':
        // a literal next character; a trailing backslash matches nothing
        if (pi + 1 >= p.size() || at(p, ++pi) != tc) return Wm::NoMatch;
        continue;
      case '?':
        if (tc == '/') return Wm::NoMatch;
        continue;
      case '*': {
        bool match_slash = false;
        size_t q = pi + 1;
        if (at(p, q) == '*') {
          while (at(p, q) == '*') ++q;
          // "**" as a whole path component: zero or more components
          if ((pi == 0 || p[pi - 1] == '/') &&
              (q == p.size() || p[q] == '/' || (p[q] == '\\' && at(p, q + 1) == '/'))) {
            if (q < p.size() && p[q] == '/' && dowild(p, q + 1, s, si) == Wm::Match) return Wm::Match;
            match_slash = true;
          }
        }
        pi = q;
        if (pi == p.size()) {
          // a trailing "**" matches everything; a trailing '*' only what has no more '/'
          if (!match_slash && s.find('/', si) != std::string_view::npos) return Wm::NoMatch;
          return Wm::Match;
        }
        if (!match_slash && p[pi] == '/') {
          // one '*' then '/': the rest of this component
          size_t slash = s.find('/', si);
          if (slash == std::string_view::npos) return Wm::NoMatch;
          si = slash;  // the '/' of both is consumed by the loop
          continue;
        }
        while (si < s.size()) {
          // a literal after the '*': skip to where it occurs (not past a '/' for a single '*')
          if (!glob_special(p[pi])) {
            while (si < s.size() && (match_slash || s[si] != '/') && s[si] != p[pi]) ++si;
            if (si >= s.size() || s[si] != p[pi]) return match_slash ? Wm::AbortAll : Wm::AbortToStarStar;
          }
          Wm m = dowild(p, pi, s, si);
          if (m != Wm::NoMatch) {
            if (!match_slash || m != Wm::AbortToStarStar) return m;
          } else if (!match_slash && s[si] == '/') {
            return Wm::AbortToStarStar;
          }
          ++si;
        }
        return Wm::AbortAll;
      }
      case '[': {
        unsigned char c = at(p, ++pi);
        if (c == '^') c = '!';
        bool negated = c == '!';
        if (negated) c = at(p, ++pi);
        unsigned char prev = 0;
        bool matched = false;
        do {
          if (pi >= p.size()) return Wm::AbortAll;  // no closing ']'
          if (c == '\\') {
            c = at(p, ++pi);
            if (pi >= p.size()) return Wm::AbortAll;
            if (tc == c) matched = true;
          } else if (c == '-' && prev && pi + 1 < p.size() && p[pi + 1] != ']') {
            c = at(p, ++pi);
            if (c == '\\') {
              c = at(p, ++pi);
              if (pi >= p.size()) return Wm::AbortAll;
            }
            if (tc <= c && tc >= prev) matched = true;
            c = 0;  // so that `prev` is 0: "a-c-e" is one range and a '-'
          } else if (c == '[' && at(p, pi + 1) == ':') {
            size_t close = p.find(']', pi + 2);
            if (close == std::string_view::npos) return Wm::AbortAll;
            if (close < pi + 3 || p[close - 1] != ':') {
              if (tc == '[') matched = true;  // no ":]": a plain '['
            } else {
              auto is = posix_class(p.substr(pi + 2, close - 1 - (pi + 2)), tc);
              if (!is) return Wm::AbortAll;  // a malformed class makes the pattern match nothing
              if (*is) matched = true;
              pi = close;
              c = 0;
            }
          } else if (tc == c) {
            matched = true;
          }
          prev = c;
          c = at(p, ++pi);
        } while (c != ']' || pi >= p.size());
        if (matched == negated || tc == '/') return Wm::NoMatch;
        continue;
      }
      default:
        if (tc != pc) return Wm::NoMatch;
        continue;
    }
  }
  return si >= s.size() ? Wm::Match : Wm::NoMatch;
}

std::string_view basename(std::string_view rel) {
  auto slash = rel.rfind('/');
  return slash == std::string_view::npos ? rel : rel.substr(slash + 1);
}

}  // namespace

bool wildmatch(std::string_view pattern, std::string_view path) { return dowild(pattern, 0, path, 0) == Wm::Match; }

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
  auto literal = [](std::string_view g) {
    for (char c : g)
      if (glob_special(c)) return false;
    return true;
  };
  if (literal(out.glob)) out.shape = Shape::Literal;
  // "*x" unanchored: the name has no '/', so the '*' is any prefix of it (and "**x" is "*x" there)
  else if (!out.anchored && out.glob.size() > 1 && out.glob[0] == '*' && out.glob[1] != '*' &&
           literal(std::string_view(out.glob).substr(1)))
    out.shape = Shape::Suffix;
  return true;
}

bool PathPattern::matches(std::string_view rel, bool is_dir) const {
  if (dir_only && !is_dir) return false;
  std::string_view subject = anchored ? rel : basename(rel);
  switch (shape) {
    case Shape::Literal:
      return subject == glob;
    case Shape::Suffix:
      return subject.ends_with(std::string_view(glob).substr(1));
    case Shape::General:
      break;
  }
  return wildmatch(glob, subject);
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
