#include "analyzer/python/add_noqa.h"

#include <algorithm>
#include <map>
#include <set>

#include "analyzer/core/suppression.h"

namespace tl::py {
namespace {

std::string no_canon(std::string_view s) {
  // codes are canonical here (they come from findings); slugs in existing comments stay as written
  if (s.size() == 5 && (s[0] == 'T' || s[0] == 't') && (s[1] == 'L' || s[1] == 'l')) {
    std::string c(s);
    for (auto& ch : c) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    return c;
  }
  return "";
}

}  // namespace

std::string apply_edits(const std::string& text, const std::vector<Edit>& edits) {
  std::string out;
  out.reserve(text.size() + 64 * edits.size());
  uint32_t at = 0;
  for (auto& e : edits) {
    out.append(text, at, e.range.begin - at);
    out += e.replacement;
    at = e.range.end;
  }
  out.append(text, at, std::string::npos);
  return out;
}

NoqaEdits add_noqa_edits(const Module& m, const std::vector<const Finding*>& findings) {
  NoqaEdits out;
  const SourceFile& src = *m.src;
  const Tree& t = m.tree;
  const std::string& text = src.text();
  // where lines end inside a string (a comment there would be part of the string)
  std::vector<std::pair<uint32_t, uint32_t>> strings;
  std::vector<std::pair<uint32_t, uint32_t>> comments;
  for (NodeId n = 0; n < t.size(); ++n) {
    if (t.kind(n) == K::String && t[n].start < t[n].end &&
        src.line_col(t[n].start).line != src.line_col(t[n].end).line)
      strings.emplace_back(t[n].start, t[n].end);
    if (t.kind(n) == K::Comment) comments.emplace_back(t[n].start, t[n].end);
  }
  auto line_end = [&](uint32_t line) {
    std::string_view lt = src.line_text(line);
    return src.line_start(line) + static_cast<uint32_t>(lt.size());
  };
  auto commentable = [&](uint32_t line) {
    uint32_t eol = line_end(line);
    for (auto [b, e] : strings)
      if (b < eol && eol < e) return false;
    std::string_view lt = src.line_text(line);
    size_t last = lt.find_last_not_of(" \t");
    if (last != std::string_view::npos && lt[last] == '\\') {
      // a backslash continuation, unless the backslash is inside a comment
      uint32_t pos = src.line_start(line) + static_cast<uint32_t>(last);
      bool in_comment = false;
      for (auto [b, e] : comments)
        if (b <= pos && pos < e) in_comment = true;
      if (!in_comment) return false;
    }
    return true;
  };
  std::map<uint32_t, std::set<std::string>> by_line;
  for (const Finding* f : findings) {
    if (f->code == "TL001") {
      // an unused suppression is reported after suppressions apply: a comment cannot silence it,
      // and `ignore[TL001]` would only add a code that is never used
      out.skipped.push_back(std::to_string(f->range.start.line) +
                            ": TL001 (a suppression comment cannot silence it; `--fix` removes the unused one)");
      continue;
    }
    uint32_t first = f->statement.start.line ? f->statement.start.line : f->range.start.line;
    uint32_t last = f->statement.stop.line ? f->statement.stop.line : f->range.start.line;
    uint32_t line = 0;
    if (commentable(first)) line = first;
    else if (last != first && commentable(last)) line = last;
    if (!line) {
      out.skipped.push_back(std::to_string(f->range.start.line) + ": " + f->code +
                            " (its statement's first and last lines end inside a string or a line continuation)");
      continue;
    }
    by_line[line].insert(f->code);
    ++out.suppressed;
  }
  auto sups = parse_python_suppressions(src, comments, no_canon);
  for (auto& [line, codes] : by_line) {
    // an existing `# trainlint: ignore[...]` on the line takes the codes
    const Suppression* existing = nullptr;
    for (auto& s : sups)
      if (s.line == line && s.syntax == Suppression::Syntax::Trainlint && s.kind == Suppression::Kind::Line && !s.all)
        existing = &s;
    if (existing) {
      std::set<std::string> have;
      for (auto& c : existing->codes) have.insert(c.code.empty() ? c.written : c.code);
      std::string add;
      for (auto& c : codes)
        if (!have.count(c)) add += ", " + c;
      if (add.empty()) continue;
      // before the closing ']' (a list without one is closed by its last code)
      uint32_t at = existing->end;
      if (at > existing->begin && text[at - 1] == ']') --at;
      std::string_view inside = src.slice(existing->begin, at);
      if (inside.find_first_not_of(" \t", inside.find('[') + 1) == std::string_view::npos) add = add.substr(2);
      Edit e;
      e.range.begin = e.range.end = at;
      e.range.start = e.range.stop = src.line_col(at);
      e.replacement = add;
      out.edits.push_back(e);
      continue;
    }
    std::string list;
    for (auto& c : codes) list += (list.empty() ? "" : ", ") + c;
    uint32_t eol = line_end(line);
    uint32_t b = eol;
    while (b > src.line_start(line) && (text[b - 1] == ' ' || text[b - 1] == '\t')) --b;
    Edit e;
    e.range.begin = b;
    e.range.end = eol;
    e.range.start = src.line_col(b);
    e.range.stop = src.line_col(eol);
    bool blank = b == src.line_start(line);
    e.replacement = (blank ? "" : "  ") + std::string("# trainlint: ignore[") + list + "]";
    out.edits.push_back(e);
  }
  std::sort(out.edits.begin(), out.edits.end(), [](const Edit& a, const Edit& b) { return a.range.begin < b.range.begin; });
  return out;
}

}  // namespace tl::py
