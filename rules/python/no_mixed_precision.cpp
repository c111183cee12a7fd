// TL502 no-mixed-precision: a program training on an accelerator with no autocast, GradScaler,
// bf16/fp16 dtype, or framework precision setting.
#include "rules/python/program_facts.h"
#include "rules/python/rules.h"

namespace tl::rules {
namespace {

std::vector<py::NodeId> low_precision_sites(const py::Module& m) {
  std::vector<py::NodeId> out;
  const auto& t = m.tree;
  for (py::NodeId n = 0; n < t.size(); ++n) {
    py::K k = t.kind(n);
    if (k == py::K::Attribute || k == py::K::Identifier) {
      auto s = t.text(n);
      if (s.size() > 80) continue;
      auto last = py::last_component(s);
      if (last == "bfloat16" || last == "float16" || last == "half" || last == "autocast" || last == "GradScaler" ||
          last == "amp")
        out.push_back(n);
    } else if (k == py::K::String) {
      auto s = t.text(n);
      if (s.size() < 40 && (s.find("bfloat16") != std::string_view::npos || s.find("float16") != std::string_view::npos ||
                            s.find("bf16") != std::string_view::npos || s.find("fp16") != std::string_view::npos ||
                            s.find("16-mixed") != std::string_view::npos))
        out.push_back(n);
    }
  }
  return out;
}

}  // namespace

void check_no_mixed_precision(RuleContext& ctx) {
  for (const py::Program* p : programs_entered_at(ctx.model, ctx.mod)) {
    if (!p->uses_accelerator) continue;
    // Facts of the code the program runs, not of every function its modules define.
    bool mixed = ctx.facts.any_site_in_program(ctx.model, *p, "mentions-low-precision",
                                               [](const py::Module& m) { return low_precision_sites(m); });
    // framework precision switches: Trainer(precision=16), Accelerator(mixed_precision=...), fp16=True
    if (!mixed)
      mixed = any_call(ctx.model, *p, [&](const py::Module& m, const py::Call& c) {
        for (auto kw : {"precision", "mixed_precision", "fp16", "bf16", "amp", "use_amp"}) {
          py::NodeId v = ctx.model.keyword_arg(m, c, kw);
          if (v == py::kNone) continue;
          if (m.tree.is(v, py::K::False) || m.tree.is(v, py::K::None)) continue;
          auto s = m.tree.text(v);
          if (s == "32" || s == "\"32\"" || s == "'32'" || s == "\"no\"" || s == "'no'" || s == "\"32-true\"") continue;
          return true;
        }
        return false;
      });
    // Accelerator() / Fabric() without an explicit precision take it from `accelerate launch`,
    // `accelerate config` or `fabric run`: not decidable from the code.
    if (!mixed)
      mixed = any_call(ctx.model, *p, [&](const py::Module& m, const py::Call& c) {
        std::string_view q = c.qname;
        bool launcher = q.rfind("accelerate.Accelerator", 0) == 0 || q == "lightning.fabric.Fabric" ||
                        q == "lightning.Fabric" || q == "lightning_fabric.Fabric";
        if (!launcher) return false;
        return ctx.model.keyword_arg(m, c, "mixed_precision") == py::kNone &&
               ctx.model.keyword_arg(m, c, "precision") == py::kNone;
      });
    if (mixed) continue;
    Anchor a = backward_anchor(ctx.model, *p);
    if (!a.call) continue;
    ctx.report_at(*a.mod, a.call->node,
                  "this program trains on an accelerator in full fp32 precision: no `torch.autocast`, `GradScaler`, "
                  "bf16/fp16 dtype or framework precision setting; tensor cores run bf16/fp16 matrix work several "
                  "times faster and halve activation memory");
  }
}

}  // namespace tl::rules
