// TL503 zero-grad-set-to-false: zero_grad(set_to_none=False).
#include "rules/python/common.h"
#include "rules/python/fix_edits.h"
#include "rules/python/rules.h"

namespace tl::rules {

void check_zero_grad_set_to_false(RuleContext& ctx) {
  for (auto& c : ctx.mod.calls) {
    if (c.method != "zero_grad" || c.receiver == py::kNone) continue;
    py::ValueSet v = ctx.model.keyword_values(ctx.mod, c, "set_to_none", 0);
    bool off = v.all([](const py::Literal& l) { return l.kind == py::Literal::Kind::Bool && l.text == "False"; }, false);
    if (!off) continue;
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
