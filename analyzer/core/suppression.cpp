#include "analyzer/core/suppression.h"

#include <algorithm>
#include <cctype>

namespace tl {
namespace {

bool istarts(std::string_view s, std::string_view word) {
  if (s.size() < word.size()) return false;
  for (size_t i = 0; i < word.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != word[i]) return false;
  return true;
}

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; }

bool looks_like_our_code(std::string_view w) {
  return w.size() == 5 && (w[0] == 'T' || w[0] == 't') && (w[1] == 'L' || w[1] == 'l') &&
         std::isdigit(static_cast<unsigned char>(w[2])) && std::isdigit(static_cast<unsigned char>(w[3])) &&
         std::isdigit(static_cast<unsigned char>(w[4]));
}

// A flake8-style code: letters then digits (E501, TL101, SIM115).
bool looks_like_code(std::string_view w) {
  size_t i = 0;
  while (i < w.size() && std::isalpha(static_cast<unsigned char>(w[i]))) ++i;
  if (i == 0 || i == w.size()) return false;
  for (; i < w.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(w[i]))) return false;
  return true;
}

void add_code(Suppression& s, std::string_view word, uint32_t at, CodeCanon canon, bool slugs_allowed) {
  std::string canonical = canon(word);
  bool ours = !canonical.empty() || looks_like_our_code(word);
  if (!ours && slugs_allowed && s.syntax == Suppression::Syntax::Trainlint) ours = true;  // unknown name in our own list
  if (!ours) {
    s.foreign.emplace_back(at, at + static_cast<uint32_t>(word.size()));
    return;
  }
  s.codes.push_back({std::string(word), canonical, at, at + static_cast<uint32_t>(word.size()), false});
}

// `# noqa...` or `# trainlint: ...` starting at text[h] == '#'. Returns true and fills `s`.
bool parse_python_directive(std::string_view text, size_t h, uint32_t base, Suppression& s, CodeCanon canon) {
  size_t i = h + 1;
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
  std::string_view rest = text.substr(i);
  if (istarts(rest, "noqa") && (rest.size() == 4 || !is_word_char(rest[4]))) {
    s.syntax = Suppression::Syntax::Noqa;
    s.kind = Suppression::Kind::Line;
    size_t j = i + 4;
    size_t end = j;
    size_t k = j;
    while (k < text.size() && text[k] == ' ') ++k;
    if (k < text.size() && text[k] == ':') {
      ++k;
      // codes separated by commas and/or spaces; the list ends at the first word that is no code
      while (true) {
        size_t w = k;
        while (w < text.size() && (text[w] == ' ' || text[w] == ',' || text[w] == '\t')) ++w;
        size_t we = w;
        while (we < text.size() && (std::isalnum(static_cast<unsigned char>(text[we])) || text[we] == '-')) ++we;
        std::string_view word = text.substr(w, we - w);
        // a code (E501, TL101) or one of our slugs (gc-collect-per-step); anything else ends the list
        if (word.empty() || (!looks_like_code(word) && canon(word).empty())) break;
        add_code(s, word, base + static_cast<uint32_t>(w), canon, false);
        end = we;
        k = we;
      }
    }
    s.all = s.codes.empty() && s.foreign.empty();
    if (s.codes.empty() && !s.all) return false;  // codes of other tools only: not ours
    s.begin = base + static_cast<uint32_t>(h);
    s.end = base + static_cast<uint32_t>(end);
    return true;
  }
  if (istarts(rest, "trainlint")) {
    size_t j = i + 9;
    while (j < text.size() && text[j] == ' ') ++j;
    if (j >= text.size() || text[j] != ':') return false;
    ++j;
    while (j < text.size() && text[j] == ' ') ++j;
    std::string_view d = text.substr(j);
    size_t wl;
    if (istarts(d, "ignore-file")) {
      s.kind = Suppression::Kind::File;
      wl = 11;
    } else if (istarts(d, "ignore") && (d.size() == 6 || !is_word_char(d[6]))) {
      s.kind = Suppression::Kind::Line;
      wl = 6;
    } else {
      return false;
    }
    s.syntax = Suppression::Syntax::Trainlint;
    size_t end = j + wl;
    size_t k = end;
    while (k < text.size() && text[k] == ' ') ++k;
    if (k < text.size() && text[k] == '[') {
      size_t close = text.find(']', k);
      size_t stop = close == std::string_view::npos ? text.size() : close;
      size_t w = k + 1;
      while (w < stop) {
        while (w < stop && (text[w] == ' ' || text[w] == ',' || text[w] == '\t')) ++w;
        size_t we = w;
        while (we < stop && text[we] != ' ' && text[we] != ',' && text[we] != '\t') ++we;
        if (we > w) add_code(s, text.substr(w, we - w), base + static_cast<uint32_t>(w), canon, true);
        w = we;
      }
      end = close == std::string_view::npos ? stop : close + 1;
    }
    s.all = s.codes.empty() && s.foreign.empty();
    s.begin = base + static_cast<uint32_t>(h);
    s.end = base + static_cast<uint32_t>(end);
    return true;
  }
  return false;
}

}  // namespace

std::vector<Suppression> parse_python_suppressions(const SourceFile& src,
                                                   const std::vector<std::pair<uint32_t, uint32_t>>& comments,
                                                   CodeCanon canon) {
  std::vector<Suppression> out;
  for (auto [cb, ce] : comments) {
    // tree-sitter's comment token runs to the '\n': in a CRLF file it holds the '\r'
    while (ce > cb && src.text()[ce - 1] == '\r') --ce;
    std::string_view text = src.slice(cb, ce);
    for (size_t h = text.find('#'); h != std::string_view::npos; h = text.find('#', h + 1)) {
      Suppression s;
      if (!parse_python_directive(text, h, cb, s, canon)) continue;
      s.line = src.line_col(cb).line;
      s.comment_begin = cb;
      s.comment_end = ce;
      out.push_back(std::move(s));
    }
  }
  return out;
}

std::vector<Suppression> parse_cpp_suppressions(const SourceFile& src, CodeCanon canon) {
  std::vector<Suppression> out;
  const std::string& t = src.text();
  size_t n = t.size();
  auto scan_comment = [&](size_t cb, size_t ce) {
    std::string_view text(t.data() + cb, ce - cb);
    for (size_t at = text.find("NOLINT"); at != std::string_view::npos; at = text.find("NOLINT", at + 6)) {
      Suppression s;
      s.syntax = Suppression::Syntax::Nolint;
      size_t j = at + 6;
      if (text.substr(j, 8) == "NEXTLINE") {
        s.kind = Suppression::Kind::NextLine;
        j += 8;
      } else if (j < text.size() && std::isalpha(static_cast<unsigned char>(text[j]))) {
        continue;  // NOLINTBEGIN / NOLINTEND: not supported, not a NOLINT either
      }
      size_t end = j;
      if (j < text.size() && text[j] == '(') {
        size_t close = text.find(')', j);
        size_t stop = close == std::string_view::npos ? text.size() : close;
        size_t w = j + 1;
        bool star = false;
        while (w < stop) {
          while (w < stop && (text[w] == ' ' || text[w] == ',' || text[w] == '\t')) ++w;
          size_t we = w;
          while (we < stop && text[we] != ' ' && text[we] != ',' && text[we] != '\t') ++we;
          std::string_view word = text.substr(w, we - w);
          if (word == "*") star = true;
          else if (!word.empty()) add_code(s, word, static_cast<uint32_t>(cb + w), canon, false);
          w = we;
        }
        end = close == std::string_view::npos ? stop : close + 1;
        if (star) {
          s.codes.clear();
          s.foreign.clear();
        }
        s.all = star || (s.codes.empty() && s.foreign.empty());
        if (!s.all && s.codes.empty()) continue;  // other tools' checks only
      } else {
        s.all = true;
      }
      s.begin = static_cast<uint32_t>(cb + at);
      s.end = static_cast<uint32_t>(cb + end);
      s.comment_begin = static_cast<uint32_t>(cb);
      s.comment_end = static_cast<uint32_t>(ce);
      s.line = src.line_col(s.begin).line;
      out.push_back(std::move(s));
    }
  };
  size_t i = 0;
  while (i < n) {
    char c = t[i];
    if (c == '/' && i + 1 < n && t[i + 1] == '/') {
      size_t e = t.find('\n', i);
      if (e == std::string::npos) e = n;
      size_t ce = e;
      if (ce > i && t[ce - 1] == '\r') --ce;
      scan_comment(i, ce);
      i = e;
    } else if (c == '/' && i + 1 < n && t[i + 1] == '*') {
      size_t e = t.find("*/", i + 2);
      e = e == std::string::npos ? n : e + 2;
      scan_comment(i, e);
      i = e;
    } else if (c == 'R' && i + 1 < n && t[i + 1] == '"' && (i == 0 || !std::isalnum(static_cast<unsigned char>(t[i - 1])) || t[i - 1] == 'u' || t[i - 1] == 'U' || t[i - 1] == 'L' || t[i - 1] == '8')) {
      size_t open = t.find('(', i + 2);
      if (open == std::string::npos) break;
      std::string close = ")" + t.substr(i + 2, open - i - 2) + "\"";
      size_t e = t.find(close, open + 1);
      i = e == std::string::npos ? n : e + close.size();
    } else if (c == '"' || (c == '\'' && !(i > 0 && std::isalnum(static_cast<unsigned char>(t[i - 1]))))) {
      size_t j = i + 1;
      while (j < n && t[j] != c && t[j] != '\n') j += t[j] == '\\' ? 2 : 1;
      i = j + 1;
    } else {
      ++i;
    }
  }
  return out;
}

bool apply_suppressions(std::vector<Suppression>& sups, const Finding& f) {
  uint32_t l0 = f.range.start.line;
  uint32_t first = f.statement.start.line ? f.statement.start.line : l0;
  uint32_t last = f.statement.stop.line ? f.statement.stop.line : l0;
  bool suppressed = false;
  for (auto& s : sups) {
    bool here = false;
    switch (s.kind) {
      case Suppression::Kind::File: here = true; break;
      case Suppression::Kind::Line: here = s.line == l0 || s.line == first || s.line == last; break;
      case Suppression::Kind::NextLine: here = s.line + 1 == l0 || s.line + 1 == first; break;
    }
    if (!here) continue;
    if (s.all) {
      s.used_all = true;
      suppressed = true;
      continue;
    }
    for (auto& c : s.codes)
      if (c.code == f.code) {
        c.used = true;
        suppressed = true;
      }
  }
  return suppressed;
}

namespace {

Range range_in(const SourceFile& src, uint32_t b, uint32_t e) {
  Range r;
  r.begin = b;
  r.end = e;
  r.start = src.line_col(b);
  r.stop = src.line_col(e);
  return r;
}

std::string directive_text(const Suppression& s) {
  switch (s.syntax) {
    case Suppression::Syntax::Noqa: return "# noqa";
    case Suppression::Syntax::Trainlint:
      return s.kind == Suppression::Kind::File ? "# trainlint: ignore-file" : "# trainlint: ignore";
    case Suppression::Syntax::Nolint: return s.kind == Suppression::Kind::NextLine ? "// NOLINTNEXTLINE" : "// NOLINT";
  }
  return "";
}

}  // namespace

Finding make_unused_suppression(const SourceFile& src, const Suppression& s, const std::vector<size_t>& unused) {
  Finding f;
  f.code = "TL001";
  f.slug = "unused-suppression";
  f.severity = Severity::Info;
  f.path = src.path();
  f.probe = "none";
  std::string where = s.kind == Suppression::Kind::File       ? "in this file"
                      : s.kind == Suppression::Kind::NextLine ? "on the next line"
                                                              : "on this line";
  Fix fix;
  fix.applicability = Applicability::Safe;
  bool remove_all = s.all || (unused.size() == s.codes.size() && s.foreign.empty());
  if (s.all) {
    f.message = "`" + directive_text(s) + "` suppresses no finding " + where;
    f.range = range_in(src, s.begin, s.end);
  } else {
    std::string list, unknown;
    for (size_t i : unused) {
      const auto& c = s.codes[i];
      if (c.code.empty()) unknown += (unknown.empty() ? "`" : ", `") + c.written + "`";
      else list += (list.empty() ? "" : ", ") + c.code;
    }
    if (!list.empty())
      f.message = "unused suppression: " + list + (unused.size() > 1 && unknown.empty() ? " have" : " has") +
                  " no finding to suppress " + where;
    if (!unknown.empty())
      f.message += (f.message.empty() ? "" : "; ") + std::string("unknown rule code ") + unknown +
                   " (`trainlint rules --all` lists them)";
    const auto& first = s.codes[unused.front()];
    f.range = range_in(src, first.begin, first.end);
  }
  f.statement = range_in(src, s.begin, s.end);
  const std::string& t = src.text();
  if (remove_all) {
    // the whole directive; the whole comment when it holds nothing else; the whole line when the
    // comment is alone on it
    std::string_view comment = src.slice(s.comment_begin, s.comment_end);
    std::string_view before = src.slice(s.comment_begin, s.begin), after = src.slice(s.end, s.comment_end);
    auto blank = [](std::string_view v) { return v.find_first_not_of(" \t") == std::string_view::npos; };
    uint32_t b = s.begin, e = s.end;
    if (blank(before) && blank(after)) {
      b = s.comment_begin;
      e = s.comment_end;
      uint32_t ls = src.line_start(src.line_col(b).line);
      uint32_t k = b;
      while (k > ls && (t[k - 1] == ' ' || t[k - 1] == '\t')) --k;
      if (k == ls) {
        // alone on its line: remove the line with its terminator
        uint32_t le = e;
        if (le < t.size() && t[le] == '\r') ++le;
        if (le < t.size() && t[le] == '\n') ++le;
        b = ls;
        e = le;
      } else {
        b = k;
      }
    } else {
      while (b > s.comment_begin && (t[b - 1] == ' ' || t[b - 1] == '\t')) --b;
      if (b == s.comment_begin) {  // the directive opens the comment: keep the rest as a comment
        b = s.begin;
        e = s.end;
        while (e < s.comment_end && (t[e] == ' ' || t[e] == '\t')) ++e;
        if (s.syntax != Suppression::Syntax::Nolint && e < s.comment_end && t[e] == '#') ++e;
        while (e < s.comment_end && (t[e] == ' ' || t[e] == '\t')) ++e;
        Edit ed{range_in(src, b, e), s.syntax == Suppression::Syntax::Nolint ? "" : "# "};
        fix.edits.push_back(ed);
        (void)comment;
      }
    }
    if (fix.edits.empty()) fix.edits.push_back({range_in(src, b, e), ""});
    fix.title = "Remove the unused suppression";
  } else {
    // rewrite the list without the unused codes, keeping the rest (other tools' codes too)
    std::vector<std::pair<uint32_t, uint32_t>> keep;
    for (size_t i = 0; i < s.codes.size(); ++i)
      if (std::find(unused.begin(), unused.end(), i) == unused.end()) keep.emplace_back(s.codes[i].begin, s.codes[i].end);
    for (auto& fr : s.foreign) keep.push_back(fr);
    std::vector<std::pair<uint32_t, uint32_t>> all = keep;
    for (size_t i : unused) all.emplace_back(s.codes[i].begin, s.codes[i].end);
    std::sort(keep.begin(), keep.end());
    std::sort(all.begin(), all.end());
    std::string sep = s.syntax == Suppression::Syntax::Nolint ? "," : ", ";
    std::string repl;
    for (auto& [b, e] : keep) repl += (repl.empty() ? "" : sep) + std::string(src.slice(b, e));
    fix.edits.push_back({range_in(src, all.front().first, all.back().second), repl});
    fix.title = "Remove the unused codes from the suppression";
  }
  f.fix = std::move(fix);
  return f;
}

}  // namespace tl
