#include "rules/python/fix_edits.h"

namespace tl::rules {

namespace {

using py::NodeId;

bool is_token(const py::Tree& t, NodeId n, std::string_view tok) {
  return n != py::kNone && !t[n].named && t.type_name(n) == tok;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\f'; }

// The layout of an argument list.
struct ArgList {
  NodeId open = py::kNone, close = py::kNone;
  std::vector<NodeId> items;     // arguments, in order (comments left out)
  std::vector<NodeId> comments;  // comments directly inside the parentheses
  std::vector<NodeId> children;  // every child, in order
};

bool read_arg_list(const py::Tree& t, NodeId args, ArgList& out) {
  if (!t.is(args, py::K::ArgumentList)) return false;
  t.for_each_child(args, [&](NodeId c) {
    out.children.push_back(c);
    if (is_token(t, c, "(")) out.open = c;
    else if (is_token(t, c, ")")) out.close = c;
    else if (t.is(c, py::K::Comment)) out.comments.push_back(c);
    else if (t[c].named) out.items.push_back(c);
  });
  // A list with a syntax error inside is left alone.
  for (NodeId c : out.children)
    if (t.is(c, py::K::Error)) return false;
  return out.open != py::kNone && out.close != py::kNone;
}

// The next child after `n` that is not a comment, or kNone.
NodeId next_token(const py::Tree& t, const ArgList& l, NodeId n) {
  bool after = false;
  for (NodeId c : l.children) {
    if (after && !t.is(c, py::K::Comment)) return c;
    if (c == n) after = true;
  }
  return py::kNone;
}

NodeId prev_token(const py::Tree& t, const ArgList& l, NodeId n) {
  NodeId prev = py::kNone;
  for (NodeId c : l.children) {
    if (c == n) return prev;
    if (!t.is(c, py::K::Comment)) prev = c;
  }
  return py::kNone;
}

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
    return {edit_bytes(m, t[l.open].end, t[l.open].end, arg)};
  }
  NodeId last = l.items.back();
  NodeId after = next_token(t, l, last);
  NodeId comma = is_token(t, after, ",") ? after : py::kNone;
  uint32_t last_end = t[last].end;
  auto inline_edit = [&] { return std::vector<Edit>{edit_bytes(m, last_end, last_end, ", " + arg)}; };
  // One line, or the closing parenthesis on the last argument's line: `f(a, b)` -> `f(a, b, x)`.
  if (s.line_index(t[l.close].start) == s.line_index(last_end)) return inline_edit();
  // One argument per line: the new one goes on a line of its own, indented like the last one.
  uint32_t lb = line_begin(s, t[last].start);
  if (!only_space(s, lb, t[last].start)) return inline_edit();
  std::string indent = s.text().substr(lb, t[last].start - lb);
  uint32_t anchor = comma != py::kNone ? t[comma].end : last_end;
  uint32_t eol = line_end(s, anchor);
  if (eol >= t[l.close].start) return inline_edit();
  std::string nl(terminator_at(s, eol));
  std::string line = nl + indent + arg + (comma != py::kNone ? "," : "");
  if (comma != py::kNone || eol == last_end) return {edit_bytes(m, eol, eol, (comma != py::kNone ? "" : ",") + line)};
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
  NodeId after = next_token(t, l, arg);
  NodeId comma = is_token(t, after, ",") ? after : py::kNone;
  uint32_t end = comma != py::kNone ? t[comma].end : t[arg].end;
  // The only argument: `f(b=False)` -> `f()`, whatever the layout inside the parentheses, when
  // no comment other than one ending the argument's line would go with it.
  if (l.items.size() == 1) {
    bool other_comments = false;
    for (NodeId c : l.comments)
      if (t[c].start < t[arg].start || s.line_index(t[c].start) != s.line_index(end)) other_comments = true;
    if (!other_comments) return {edit_bytes(m, t[l.open].end, t[l.close].start, "")};
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
    bool close_here = t[l.close].start < eol + 1 && t[l.close].start >= lb;
    if ((rest == eol || comment_to_eol) && !close_here && s.line_index(t[arg].start) != s.line_index(t[l.open].start))
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
    NodeId before = prev_token(t, l, arg);
    if (!is_token(t, before, ",")) return {};
    NodeId prev = l.items[idx - 1];
    if (!comment_between(t, l, t[prev].end, t[arg].end)) return {edit_bytes(m, t[prev].end, t[arg].end, "")};
    return {edit_bytes(m, t[before].start, t[before].end, ""), edit_bytes(m, t[arg].start, t[arg].end, "")};
  }
  // The only argument, beside comments: remove it and its comma.
  return {edit_bytes(m, t[arg].start, end, "")};
}

}  // namespace tl::rules
