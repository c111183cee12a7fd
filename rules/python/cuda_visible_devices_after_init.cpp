// TL302 cuda-visible-devices-after-init: CUDA_VISIBLE_DEVICES is set after code that has already
// initialised CUDA in the same execution path.
#include <algorithm>

#include "rules/python/common.h"
#include "rules/python/rules.h"

namespace tl::rules {
namespace {

constexpr std::string_view kVar = "CUDA_VISIBLE_DEVICES";

// Is `n` inside a branch (if/else/except/case), a nested def or lambda, between it and `top`?
// The script's `if __name__ == "__main__":` block runs unconditionally.
bool conditional_within(const py::Module& m, py::NodeId n, py::NodeId top) {
  const auto& t = m.tree;
  for (py::NodeId p = t.parent(n); p != py::kNone && p != top; p = t.parent(p)) {
    switch (t.kind(p)) {
      case py::K::IfStatement:
        if (std::find(m.main_guards.begin(), m.main_guards.end(), p) != m.main_guards.end()) break;
        return true;
      case py::K::ElifClause: case py::K::ElseClause: case py::K::ExceptClause:
      case py::K::CaseClause: case py::K::ConditionalExpression: case py::K::BooleanOperator:
      case py::K::FunctionDefinition: case py::K::Lambda: case py::K::ClassDefinition: case py::K::WhileStatement:
        return true;
      default: break;
    }
  }
  return false;
}

struct Finder {
  const RuleContext& ctx;
  // Does function f initialise CUDA unconditionally (directly or through calls)?
  const py::Call* function_inits(const py::Function* f, int depth) {
    if (!f || depth > 3 || f->body == py::kNone) return nullptr;
    for (uint32_t ci : f->calls) {
      const py::Call& c = f->mod->calls[ci];
      if (conditional_within(*f->mod, c.node, f->body)) continue;
      if (ctx.model.initialises_cuda(*f->mod, c)) return &c;
      if (c.target && c.target != f)
        if (const py::Call* i = function_inits(c.target, depth + 1)) return i;
    }
    return nullptr;
  }
  // The first unconditional CUDA initialisation before `node` in its function (or module) body,
  // directly or inside a function called there; else the one that has initialised CUDA before
  // the function is entered, following the calls from the entry scripts in order.
  const py::Call* init_before(const py::Module& m, py::NodeId node, const py::Function* f) {
    py::NodeId top = f ? f->body : m.tree.root();
    if (top == py::kNone) return nullptr;
    for (auto& c : m.calls) {
      if (c.fn != f || m.tree[c.node].end > m.tree[node].start) continue;
      if (!m.tree.contains(top, c.node)) continue;
      if (conditional_within(m, c.node, top)) continue;
      if (ctx.model.initialises_cuda(m, c)) return &c;
      if (c.target && c.target != f)
        if (const py::Call* i = function_inits(c.target, 1)) return i;
    }
    return ctx.model.cuda_initialised_before(f);
  }
};

bool sets_cvd(const RuleContext& ctx, const py::Call& c) {
  const auto& t = ctx.tree;
  std::string_view q = c.qname;
  if (q == "os.environ.setdefault" || q == "os.putenv" || q == "os.environ.__setitem__") {
    py::NodeId k = ctx.model.positional_arg(ctx.mod, c, 0);
    return k != py::kNone && py::string_literal_value(t, k) == kVar;
  }
  if (q == "os.environ.update") {
    py::NodeId a = ctx.model.positional_arg(ctx.mod, c, 0);
    return (a != py::kNone && t.text(a).find(kVar) != std::string_view::npos) ||
           ctx.model.keyword_arg(ctx.mod, c, kVar) != py::kNone;
  }
  return false;
}

}  // namespace

void check_cuda_visible_devices_after_init(RuleContext& ctx) {
  const auto& t = ctx.tree;
  Finder finder{ctx};
  auto check = [&](py::NodeId site) {
    const py::Function* f = ctx.mod.enclosing_function(site);
    const py::Call* init = finder.init_before(ctx.mod, site, f);
    if (!init) return;
    ctx.report(site,
               "`CUDA_VISIBLE_DEVICES` is set after CUDA has been initialised on this path: the setting has no effect "
               "and the process keeps seeing every GPU; set it before the first CUDA call (or before importing the "
               "code that makes it)",
               {RuleContext::note_at(*init->mod, init->node, "CUDA is initialised here first")});
  };
  for (py::NodeId a : ctx.mod.assignments) {
    py::NodeId l = t.field(a, py::F::Left);
    if (l == py::kNone || !t.is(l, py::K::Subscript)) continue;
    py::NodeId v = t.field(l, py::F::Value), k = t.field(l, py::F::Subscript);
    if (v == py::kNone || k == py::kNone || py::string_literal_value(t, k) != kVar) continue;
    if (ctx.model.qualified_name(ctx.mod, v) != "os.environ") continue;
    check(a);
  }
  for (auto& c : ctx.mod.calls)
    if (sets_cvd(ctx, c)) check(c.node);
}

}  // namespace tl::rules
