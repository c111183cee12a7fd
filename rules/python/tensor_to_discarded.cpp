// TL401 tensor-to-discarded: x.to()/cuda()/cpu()/half()/float()/double()/bfloat16() as an
// expression statement on a tensor: the converted tensor is dropped.
#include "rules/python/common.h"
#include "rules/python/rules.h"

namespace tl::rules {

namespace {

bool conversion(std::string_view m) {
  return m == "to" || m == "cuda" || m == "cpu" || m == "half" || m == "float" || m == "double" || m == "bfloat16";
}

// The kept value a receiver converts: `x` of `x.float()`, `loss` of `loss.detach()` (conversions,
// and the copies and views that keep the value: detach, contiguous, clone). kNone when the
// receiver is a tensor made in the statement itself (`torch.ones(1)` of `torch.ones(1).cuda()`,
// run for its side effect of initialising CUDA; `model(x)` of `model(x).cpu()`): no variable is
// left unchanged, so the finding's point and its fix would not apply.
py::NodeId kept_value(RuleContext& ctx, py::NodeId n) {
  const auto& t = ctx.tree;
  for (int depth = 0; n != py::kNone && depth < 64; ++depth) {
    if (t.is(n, py::K::ParenthesizedExpression)) {
      n = t.first_named_child(n);
      continue;
    }
    if (!t.is(n, py::K::Call)) break;
    const py::Call* c = ctx.mod.call_at(n);
    if (!c || c->receiver == py::kNone) return py::kNone;
    std::string_view m = c->method;
    if (!conversion(m) && m != "detach" && m != "contiguous" && m != "clone") return py::kNone;
    n = c->receiver;
  }
  // a name, or an attribute / element of one (`self.buf`, `batch[0]`)
  for (py::NodeId r = n; r != py::kNone;) {
    if (t.is(r, py::K::Identifier)) return n;
    if (t.is(r, py::K::Attribute)) r = t.field(r, py::F::Object);
    else if (t.is(r, py::K::Subscript)) r = t.field(r, py::F::Value);
    else return py::kNone;
  }
  return py::kNone;
}

}  // namespace

void check_tensor_to_discarded(RuleContext& ctx) {
  const auto& t = ctx.tree;
  for (py::NodeId st : ctx.mod.expression_statements) {
    py::NodeId e = t.first_named_child(st);
    if (e == py::kNone || !t.is(e, py::K::Call)) continue;
    const py::Call* c = ctx.mod.call_at(e);
    if (!c || c->receiver == py::kNone) continue;
    std::string_view m = c->method;
    if (!conversion(m)) continue;
    if (ctx.model.type_of(ctx.mod, c->receiver) != py::TypeKind::Tensor) continue;
    py::NodeId kept = kept_value(ctx, c->receiver);
    if (kept == py::kNone) continue;
    std::string recv(t.text(c->receiver)), var(t.text(kept));
    Fix fix;
    fix.title = "Assign the result back to `" + var + "`";
    // only for the plain case: through a chain (`loss.detach().cpu()`) assigning back would also
    // detach `loss`, which later code may still need
    if (kept == c->receiver && py::dotted_text(t, kept) == var) {
      Edit ed;
      ed.range = RuleContext::range_of(ctx.mod, e);
      ed.range.end = ed.range.begin;
      ed.range.stop = ed.range.start;
      ed.replacement = var + " = ";
      fix.edits.push_back(ed);
    }
    Finding& f = ctx.report(e, "`" + recv + "." + std::string(m) + "(...)` returns a new tensor and the result is dropped: `" + var +
                      "` is unchanged (only `nn.Module.to()` works in place); assign it: `" + var + " = " + recv + "." +
                      std::string(m) + "(...)`");
    if (!fix.edits.empty()) f.fix = std::move(fix);
  }
}

}  // namespace tl::rules
