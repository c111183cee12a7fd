// TL503 zero-grad-set-to-false: zero_grad(set_to_none=False).
#include "rules/python/common.h"
#include "rules/python/fix_edits.h"
#include "rules/python/rules.h"

namespace tl::rules {
namespace {

using py::K;
using py::F;
using py::NodeId;

// Is `e` a gradient: `x.grad` or `x.grad.data`?
bool is_grad(const py::Tree& t, NodeId e) {
  if (e == py::kNone || !t.is(e, K::Attribute)) return false;
  NodeId a = t.field(e, F::Attribute);
  if (a != py::kNone && t.text(a) == "data") return is_grad(t, t.field(e, F::Object));
  return a != py::kNone && t.text(a) == "grad";
}

// Is `n` under an `if` whose condition tests a gradient against None (`if p.grad is not None:`)?
bool none_checked(const py::Tree& t, NodeId n) {
  for (NodeId p = t.parent(n); p != py::kNone; p = t.parent(p)) {
    if (t.is(p, K::FunctionDefinition)) break;
    if (!t.is(p, K::IfStatement) && !t.is(p, K::ElifClause) && !t.is(p, K::ConditionalExpression)) continue;
    std::string_view cond = t.text(t.is(p, K::ConditionalExpression) ? p : t.field(p, F::Condition));
    if (cond.find("grad") != std::string_view::npos && cond.find("None") != std::string_view::npos) return true;
  }
  return false;
}

// The module updates gradients in place with no None check (`p.grad += g`, `p.grad.add_(g)`,
// parameter servers and hand-written accumulation): gradients set to None would break it, so
// zeroing them is what the code needs.
bool grads_updated_in_place(const RuleContext& ctx) {
  const py::Tree& t = ctx.tree;
  for (NodeId n = 0; n < t.size(); ++n) {
    if (t.is(n, K::AugmentedAssignment) && is_grad(t, t.field(n, F::Left)) && !none_checked(t, n)) return true;
    if (t.is(n, K::Call)) {
      NodeId f = t.field(n, F::Function);
      if (f == py::kNone || !t.is(f, K::Attribute)) continue;
      NodeId m = t.field(f, F::Attribute);
      std::string_view meth = m != py::kNone ? t.text(m) : std::string_view{};
      if (meth.size() > 1 && meth.back() == '_' && meth != "zero_" && is_grad(t, t.field(f, F::Object)) &&
          !none_checked(t, n))
        return true;
    }
  }
  return false;
}

}  // namespace

void check_zero_grad_set_to_false(RuleContext& ctx) {
  int in_place = -1;  // computed once, when some call asks
  for (auto& c : ctx.mod.calls) {
    if (c.method != "zero_grad" || c.receiver == py::kNone) continue;
    py::ValueSet v = ctx.model.keyword_values(ctx.mod, c, "set_to_none", 0);
    bool off = v.all([](const py::Literal& l) { return l.kind == py::Literal::Kind::Bool && l.text == "False"; }, false);
    if (!off) continue;
    if (in_place < 0) in_place = grads_updated_in_place(ctx);
    if (in_place) continue;
    Finding& f = ctx.report(c.node, "`zero_grad(set_to_none=False)` writes zeros into every gradient each step (a memset kernel per "
                       "parameter, and an add instead of a plain write in backward); the default `set_to_none=True` "
                       "skips both");
    // Only a literal `False` is removed: a name may be read elsewhere.
    py::NodeId arg = py::kNone;
    if (py::NodeId kv = ctx.model.keyword_arg(ctx.mod, c, "set_to_none"); kv != py::kNone) {
      if (ctx.tree.is(kv, py::K::False)) arg = ctx.tree.parent(kv);
    } else if (py::NodeId p = ctx.model.positional_arg(ctx.mod, c, 0); p != py::kNone && ctx.tree.is(p, py::K::False)) {
      arg = p;
    }
    if (arg == py::kNone) continue;
    Fix fix;
    fix.title = "Remove `set_to_none=False`";
    fix.applicability = Applicability::Safe;
    fix.edits = remove_argument(ctx.mod, arg);
    if (!fix.edits.empty()) f.fix = std::move(fix);
  }
}

}  // namespace tl::rules
