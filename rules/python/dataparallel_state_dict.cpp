// TL404 dataparallel-state-dict: torch.save(m.state_dict(), ...) where m is a DataParallel/DDP wrapper.
#include "rules/python/common.h"
#include "rules/python/fix_edits.h"
#include "rules/python/rules.h"

namespace tl::rules {

bool is_ddp_ctor(std::string_view q);

namespace {

// Is `node` where the program has just checked that `recv` is no wrapper: the `else` of
// `if isinstance(recv, (DataParallel, ...)):` / `if hasattr(recv, "module"):`, or the body of
// `if not isinstance(recv, ...):`?
bool checked_not_wrapped(const RuleContext& ctx, py::NodeId node, std::string_view recv) {
  const auto& t = ctx.tree;
  // the test names the receiver and a wrapper: isinstance(recv, ...DataParallel...) or hasattr(recv, "module")
  auto tests_wrapper = [&](py::NodeId cond) {
    if (cond == py::kNone || !t.is(cond, py::K::Call)) return false;
    const py::Call* c = ctx.mod.call_at(cond);
    if (!c) return false;
    py::NodeId a0 = ctx.model.positional_arg(ctx.mod, *c, 0), a1 = ctx.model.positional_arg(ctx.mod, *c, 1);
    if (a0 == py::kNone || a1 == py::kNone || py::dotted_text(t, a0) != recv) return false;
    if (c->qname == "builtins.isinstance") return t.text(a1).find("DataParallel") != std::string_view::npos;
    if (c->qname == "builtins.hasattr") return py::string_literal_value(t, a1) == "module";
    return false;
  };
  for (py::NodeId child = node, p = t.parent(node); p != py::kNone; child = p, p = t.parent(p)) {
    if (t.is(p, py::K::FunctionDefinition) || t.is(p, py::K::Lambda)) break;
    if (t.is(p, py::K::ElseClause)) {
      py::NodeId ifs = t.parent(p);
      if (ifs != py::kNone && t.is(ifs, py::K::IfStatement) && tests_wrapper(t.field(ifs, py::F::Condition))) return true;
    }
    if (t.is(p, py::K::IfStatement) && t.field(p, py::F::Consequence) == child) {
      py::NodeId cond = t.field(p, py::F::Condition);
      if (cond != py::kNone && t.is(cond, py::K::NotOperator) && tests_wrapper(t.field(cond, py::F::Argument)))
        return true;
    }
  }
  return false;
}

}  // namespace

void check_dataparallel_state_dict(RuleContext& ctx) {
  const auto& t = ctx.tree;
  for (auto& c : ctx.mod.calls) {
    if (c.qname != "torch.save") continue;
    py::NodeId obj = ctx.model.positional_arg(ctx.mod, c, 0);
    if (obj == py::kNone) obj = ctx.model.keyword_arg(ctx.mod, c, "obj");
    if (obj == py::kNone) continue;
    // the state_dict() call may be the argument itself or a value inside a dict literal
    std::vector<py::NodeId> stack{obj};
    while (!stack.empty()) {
      py::NodeId x = stack.back();
      stack.pop_back();
      if (t.is(x, py::K::Call)) {
        const py::Call* sd = ctx.mod.call_at(x);
        if (sd && sd->method == "state_dict" && sd->receiver != py::kNone) {
          bool wrapped = false, always = true;  // always: every binding of the name is a wrapper
          std::string which;
          for (auto& o : ctx.model.origins(ctx.mod, sd->receiver, ctx.tree[c.node].start)) {
            bool w = false;
            if (o == "torch.nn.DataParallel" || o == "torch.nn.parallel.DataParallel") { w = true; which = "DataParallel"; }
            if (is_ddp_ctor(o)) { w = true; which = "DistributedDataParallel"; }
            wrapped |= w;
            always &= w;
          }
          if (wrapped && checked_not_wrapped(ctx, c.node, py::dotted_text(t, sd->receiver))) wrapped = false;
          if (wrapped) {
            std::string recv(t.text(sd->receiver));
            Finding& f = ctx.report(c.node, "`" + recv + "` is a " + which + " wrapper: its state_dict keys all start "
                                            "with `module.` and will not load into the bare model; save `" + recv +
                                            ".module.state_dict()`");
            // Only where the name is always a wrapper: a bare model has no `.module`.
            if (always && py::dotted_text(t, sd->receiver) == recv) {
              Fix fix;
              fix.title = "Save `" + recv + ".module.state_dict()`";
              fix.applicability = Applicability::Safe;
              fix.edits.push_back(edit_bytes(ctx.mod, t[sd->receiver].end, t[sd->receiver].end, ".module"));
              f.fix = std::move(fix);
            }
            break;
          }
          continue;
        }
      }
      if (t.is(x, py::K::Lambda)) continue;
      for (py::NodeId ch = t.first_child(x); ch != py::kNone; ch = t.next_sibling(ch))
        if (t[ch].named) stack.push_back(ch);
    }
  }
}

}  // namespace tl::rules
