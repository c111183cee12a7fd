// TL401 tensor-to-discarded: x.to()/cuda()/cpu()/half()/float()/double()/bfloat16() as an
// expression statement on a tensor: the converted tensor is dropped.
#include "rules/python/common.h"
#include "rules/python/rules.h"

namespace tl::rules {

void check_tensor_to_discarded(RuleContext& ctx) {
  const auto& t = ctx.tree;
  for (py::NodeId st : ctx.mod.expression_statements) {
    py::NodeId e = t.first_named_child(st);
    if (e == py::kNone || !t.is(e, py::K::Call)) continue;
    const py::Call* c = ctx.mod.call_at(e);
    if (!c || c->receiver == py::kNone) continue;
    std::string_view m = c->method;
    if (m != "to" && m != "cuda" && m != "cpu" && m != "half" && m != "float" && m != "double" && m != "bfloat16") continue;
    if (ctx.model.type_of(ctx.mod, c->receiver) != py::TypeKind::Tensor) continue;
    std::string recv(t.text(c->receiver));
    Fix fix;
    fix.title = "Assign the result back to `" + recv + "`";
    if (py::dotted_text(t, c->receiver) == recv) {
      Edit ed;
      ed.range = RuleContext::range_of(ctx.mod, e);
      ed.range.end = ed.range.begin;
      ed.range.stop = ed.range.start;
      ed.replacement = recv + " = ";
      fix.edits.push_back(ed);
    }
    Finding& f = ctx.report(e, "`" + recv + "." + std::string(m) + "(...)` returns a new tensor and the result is dropped: `" + recv +
                      "` is unchanged (only `nn.Module.to()` works in place); assign it: `" + recv + " = " + recv + "." +
                      std::string(m) + "(...)`");
    if (!fix.edits.empty()) f.fix = std::move(fix);
  }
}

}  // namespace tl::rules
