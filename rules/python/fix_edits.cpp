#include "rules/python/fix_edits.h"

namespace tl::rules {

namespace {

using py::NodeId;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\f'; }

// One piece of an argument list: the parentheses and commas are not nodes of the compact tree
// (analyzer/python/ast.cpp drops punctuation), so the list is read from its named children and the
// source text between them.
struct Tok {
  enum class Kind : uint8_t { Open, Close, Comma, Item, Comment } kind;
  uint32_t start = 0, end = 0;
  NodeId node = py::kNone;  // Item, Comment
};

// The layout of an argument list.
struct ArgList {
  Tok open{Tok::Kind::Open}, close{Tok::Kind::Close};
  std::vector<NodeId> items;     // arguments, in order (comments left out)
  std::vector<NodeId> comments;  // comments directly inside the parentheses
  std::vector<Tok> children;     // every piece, in order
};

// The commas between `begin` and `end` (a gap between two children of the list); false when the
// gap holds anything but commas, blanks and line continuations.
bool read_gap(std::string_view x, uint32_t begin, uint32_t end, std::vector<Tok>& out) {
  for (uint32_t i = begin; i < end; ++i) {
    char c = x[i];
    if (c == ',') out.push_back({Tok::Kind::Comma, i, i + 1});
    else if (!(is_space(c) || c == '\n' || c == '\r' || c == '\\')) return false;
  }
  return true;
}

bool read_arg_list(const py::Tree& t, NodeId args, ArgList& out) {
  if (!t.is(args, py::K::ArgumentList)) return false;
  std::string_view x = t.source().text();
  uint32_t b = t[args].start, e = t[args].end;
  // a list with a missing parenthesis (a syntax error) is left alone
  if (e - b < 2 || x[b] != '(' || x[e - 1] != ')') return false;
  out.open = {Tok::Kind::Open, b, b + 1};
  out.close = {Tok::Kind::Close, e - 1, e};
  out.children.push_back(out.open);
  uint32_t at = b + 1;
  bool ok = true;
  t.for_each_child(args, [&](NodeId c) {
    if (!ok) return;
    if (t.is(c, py::K::Error) || !t[c].named || t[c].start < at) {  // a syntax error, or a token kept
      ok = false;
      return;
    }
    ok = read_gap(x, at, t[c].start, out.children);
    bool comment = t.is(c, py::K::Comment);
    out.children.push_back({comment ? Tok::Kind::Comment : Tok::Kind::Item, t[c].start, t[c].end, c});
    (comment ? out.comments : out.items).push_back(c);
    at = t[c].end;
  });
  if (!ok || at > e - 1 || !read_gap(x, at, e - 1, out.children)) return false;
  out.children.push_back(out.close);
  return true;
}

// The piece after the argument `n` that is not a comment (a comma, the closing parenthesis or
// the next argument); null when none.
const Tok* next_token(const ArgList& l, NodeId n) {
  bool after = false;
  for (const Tok& c : l.children) {
    if (after && c.kind != Tok::Kind::Comment) return &c;
    if (c.node == n && c.kind == Tok::Kind::Item) after = true;
  }
  return nullptr;
}

const Tok* prev_token(const ArgList& l, NodeId n) {
  const Tok* prev = nullptr;
  for (const Tok& c : l.children) {
    if (c.node == n && c.kind == Tok::Kind::Item) return prev;
    if (c.kind != Tok::Kind::Comment) prev = &c;
  }
  return nullptr;
}

bool is_comma(const Tok* k) { return k && k->kind == Tok::Kind::Comma; }

bool comment_between(const py::Tree& t, const ArgList& l, uint32_t begin, uint32_t end) {
  for (NodeId c : l.comments)
    if (t[c].start >= begin && t[c].end <= end) return true;
  return false;
}

// Byte offset of the start of the line holding `off`.
uint32_t line_begin(const SourceFile& s, uint32_t off) { return s.line_start(s.line_index(off) + 1); }

// Byte offset where the line holding `off` ends, before its terminator.
uint32_t line_end(const SourceFile& s, uint32_t off) {
  const std::string& x = s.text();
  uint32_t e = off;
  while (e < x.size() && x[e] != '\n' && x[e] != '\r') ++e;
  return e;
}

// The terminator starting at `off` ("\r\n", "\n", "\r"), or "".
std::string_view terminator_at(const SourceFile& s, uint32_t off) {
  std::string_view x = s.text();
  if (x.substr(off, 2) == "\r\n") return "\r\n";
  if (off < x.size() && (x[off] == '\n' || x[off] == '\r')) return x.substr(off, 1);
  return {};
}

bool only_space(const SourceFile& s, uint32_t begin, uint32_t end) {
  for (uint32_t i = begin; i < end; ++i)
    if (!is_space(s.text()[i])) return false;
  return true;
}

}  // namespace

Edit edit_bytes(const py::Module& m, uint32_t begin, uint32_t end, std::string replacement) {
  return Edit{RuleContext::range_of(m, begin, end), std::move(replacement)};
}

Edit replace_node(const py::Module& m, py::NodeId n, std::string replacement) {
  return edit_bytes(m, m.tree[n].start, m.tree[n].end, std::move(replacement));
}

std::vector<Edit> add_argument(const py::Module& m, py::NodeId call, std::string_view argument) {
  const py::Tree& t = m.tree;
  const SourceFile& s = *m.src;
  ArgList l;
  if (!read_arg_list(t, t.field(call, py::F::Arguments), l)) return {};
  std::string arg(argument);
  if (l.items.empty()) {
    if (!l.comments.empty()) return {};
    return {edit_bytes(m, l.open.end, l.open.end, arg)};
  }
  NodeId last = l.items.back();
  const Tok* after = next_token(l, last);
  const Tok* comma = is_comma(after) ? after : nullptr;
  uint32_t last_end = t[last].end;
  auto inline_edit = [&] { return std::vector<Edit>{edit_bytes(m, last_end, last_end, ", " + arg)}; };
  // One line, or the closing parenthesis on the last argument's line: `f(a, b)` -> `f(a, b, x)`.
  if (s.line_index(l.close.start) == s.line_index(last_end)) return inline_edit();
  // One argument per line: the new one goes on a line of its own, indented like the last one.
  uint32_t lb = line_begin(s, t[last].start);
  if (!only_space(s, lb, t[last].start)) return inline_edit();
  std::string indent = s.text().substr(lb, t[last].start - lb);
  uint32_t anchor = comma ? comma->end : last_end;
  uint32_t eol = line_end(s, anchor);
  if (eol >= l.close.start) return inline_edit();
  std::string nl(terminator_at(s, eol));
  std::string line = nl + indent + arg + (comma ? "," : "");
  if (comma || eol == last_end) return {edit_bytes(m, eol, eol, (comma ? "" : ",") + line)};
  // `last  # comment` -> `last,  # comment` + the new line
  return {edit_bytes(m, last_end, last_end, ","), edit_bytes(m, eol, eol, line)};
}

std::vector<Edit> remove_argument(const py::Module& m, py::NodeId arg) {
  const py::Tree& t = m.tree;
  const SourceFile& s = *m.src;
  ArgList l;
  if (arg == py::kNone || !read_arg_list(t, t.parent(arg), l)) return {};
  size_t idx = 0;
  while (idx < l.items.size() && l.items[idx] != arg) ++idx;
  if (idx == l.items.size()) return {};
  const Tok* after = next_token(l, arg);
  const Tok* comma = is_comma(after) ? after : nullptr;
  uint32_t end = comma ? comma->end : t[arg].end;
  // The only argument: `f(b=False)` -> `f()`, whatever the layout inside the parentheses, when
  // no comment other than one ending the argument's line would go with it.
  if (l.items.size() == 1) {
    bool other_comments = false;
    for (NodeId c : l.comments)
      if (t[c].start < t[arg].start || s.line_index(t[c].start) != s.line_index(end)) other_comments = true;
    if (!other_comments) return {edit_bytes(m, l.open.end, l.close.start, "")};
  }
  // An argument on a line of its own: remove the line, and a comment that ends it.
  uint32_t lb = line_begin(s, t[arg].start);
  if (only_space(s, lb, t[arg].start)) {
    uint32_t eol = line_end(s, end);
    uint32_t rest = end;
    while (rest < eol && is_space(s.text()[rest])) ++rest;
    bool comment_to_eol = false;
    for (NodeId c : l.comments)
      if (t[c].start == rest && t[c].end == eol) comment_to_eol = true;
    bool close_here = l.close.start < eol + 1 && l.close.start >= lb;
    if ((rest == eol || comment_to_eol) && !close_here && s.line_index(t[arg].start) != s.line_index(l.open.start))
      return {edit_bytes(m, lb, eol + static_cast<uint32_t>(terminator_at(s, eol).size()), "")};
  }
  if (idx + 1 < l.items.size()) {
    // `f(b=False, c)` -> `f(c)`
    NodeId next = l.items[idx + 1];
    if (!comment_between(t, l, t[arg].start, t[next].start)) return {edit_bytes(m, t[arg].start, t[next].start, "")};
    uint32_t e = end;
    while (e < s.text().size() && is_space(s.text()[e])) ++e;
    return {edit_bytes(m, t[arg].start, e, "")};
  }
  if (idx > 0) {
    // `f(a, b=False)` -> `f(a)`; a trailing comma stays: `f(a, b=False,)` -> `f(a,)`
    const Tok* before = prev_token(l, arg);
    if (!is_comma(before)) return {};
    NodeId prev = l.items[idx - 1];
    if (!comment_between(t, l, t[prev].end, t[arg].end)) return {edit_bytes(m, t[prev].end, t[arg].end, "")};
    return {edit_bytes(m, before->start, before->end, ""), edit_bytes(m, t[arg].start, t[arg].end, "")};
  }
  // The only argument, beside comments: remove it and its comma.
  return {edit_bytes(m, t[arg].start, end, "")};
}

}  // namespace tl::rules
