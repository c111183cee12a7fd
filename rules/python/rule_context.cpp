#include "rules/python/rule_context.h"

#include <string>

namespace tl {

Range RuleContext::range_of(const py::Module& m, py::NodeId n) { return range_of(m, m.tree[n].start, m.tree[n].end); }

Range RuleContext::range_of(const py::Module& m, uint32_t begin, uint32_t end) {
  Range r;
  r.begin = begin;
  r.end = end;
  r.start = m.src->line_col(r.begin);
  r.stop = m.src->line_col(r.end);
  return r;
}

Note RuleContext::note_at(const py::Module& m, py::NodeId n, std::string message) {
  return Note{m.path, range_of(m, n), std::move(message)};
}

namespace {

// The statement a finding belongs to, for suppressions, fingerprints and --diff-base: the
// innermost statement holding `n`; when `n` sits in a compound statement's header (`for x in
// DataLoader(...):`, an `elif` condition, a decorator), only that header.
std::pair<uint32_t, uint32_t> statement_span(const py::Tree& t, py::NodeId n) {
  py::NodeId s = py::ProgramModel::statement_of(t, n);
  if (s == py::kNone) return {t[n].start, t[n].end};
  for (py::NodeId a = n; a != py::kNone; a = t.parent(a)) {
    if (t.is(a, py::K::Decorator)) return {t[a].start, t[a].end};
    py::NodeId body = py::kNone;
    t.for_each_child(a, [&](py::NodeId c) {
      if (body == py::kNone && t.is(c, py::K::Block) && (a == n || (!t.contains(c, n) && t[c].start >= t[n].end)))
        body = c;
    });
    if (body != py::kNone) {
      uint32_t e = t[body].start;
      const std::string& text = t.source().text();
      while (e > t[a].start && (text[e - 1] == ' ' || text[e - 1] == '\t' || text[e - 1] == '\n' || text[e - 1] == '\r')) --e;
      return {t[a].start, e};
    }
    if (a == s) break;
  }
  return {t[s].start, t[s].end};
}

// The qualified name of the innermost function or class around `n` ("" at module level).
std::string scope_of(const py::Module& m, py::NodeId n) {
  for (py::NodeId p = n; p != py::kNone; p = m.tree.parent(p)) {
    if (m.tree.is(p, py::K::FunctionDefinition)) {
      if (const py::Function* f = m.function_of_def(p)) return f->qualname;
    } else if (m.tree.is(p, py::K::ClassDefinition)) {
      for (auto& c : m.classes)
        if (c->def == p) return c->qualname;
    }
  }
  return "";
}

}  // namespace

Finding& RuleContext::report(py::NodeId node, std::string message, std::vector<Note> notes) {
  return report_at(mod, node, std::move(message), std::move(notes));
}

Finding& RuleContext::report_at(const py::Module& m, py::NodeId node, std::string message, std::vector<Note> notes) {
  Finding f;
  f.code = std::string(rule.code);
  f.slug = std::string(rule.slug);
  f.severity = rule.severity;
  f.message = std::move(message);
  f.path = m.path;
  f.range = range_of(m, node);
  f.notes = std::move(notes);
  f.probe = std::string(rule.probe);
  f.scope = scope_of(m, node);
  auto [sb, se] = statement_span(m.tree, node);
  f.statement.begin = sb;
  f.statement.end = se;
  f.statement.start = m.src->line_col(sb);
  f.statement.stop = m.src->line_col(se);
  out_.push_back(std::move(f));
  return out_.back();
}

Finding& RuleContext::report_per_step(py::NodeId node, std::string message, const py::StepContext& sc) {
  std::vector<Note> notes;
  if (sc.loop_mod && sc.loop_node != py::kNone) {
    std::string what = sc.desc;
    if (sc.loop_mod->tree.is(sc.loop_node, py::K::FunctionDefinition))
      notes.push_back(note_at(*sc.loop_mod, sc.loop_node, "runs every step: " + what));
    else
      notes.push_back(note_at(*sc.loop_mod, sc.loop_node, "runs every iteration of this " + what));
  }
  for (size_t i = 0; i < sc.chain.size(); ++i) {
    const py::Call* c = sc.chain[i];
    const py::Module* cm = sc.chain_mods[i];
    std::string callee(cm->tree.text(c->callee));
    if (callee.size() > 60) callee = callee.substr(0, 57) + "...";
    notes.push_back(note_at(*cm, c->node, "through this call to `" + callee + "`, made every step"));
  }
  return report(node, std::move(message), std::move(notes));
}

}  // namespace tl
