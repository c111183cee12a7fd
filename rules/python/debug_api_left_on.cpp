// TL504 debug-api-left-on: set_detect_anomaly(True) anywhere in a training program, or
// detect_anomaly()/emit_nvtx()/gradcheck/gradgradcheck used inside a step loop.
#include "rules/python/program_facts.h"
#include "rules/python/rules.h"

namespace tl::rules {

void check_debug_api_left_on(RuleContext& ctx) {
  // a training program: one with a training step loop or a framework step hook (docs/concepts.md)
  // asked only at a set_detect_anomaly call: the fact looks at every member of every program the
  // module belongs to, and most modules make no such call
  auto training = [&] {
    return ctx.facts.any_in_programs(ctx.model, ctx.mod, "trains", [](const py::Module& m) {
      for (auto& L : m.loops)
        if (L.kind == py::LoopKind::TrainStep) return true;
      for (auto& f : m.functions)
        if (f->is_step_hook) return true;
      return false;
    });
  };
  for (auto& c : ctx.mod.calls) {
    std::string_view q = c.qname;
    if (q == "torch.autograd.set_detect_anomaly" || q == "torch.autograd.anomaly_mode.set_detect_anomaly") {
      if (!training()) continue;
      py::ValueSet v = ctx.model.keyword_values(ctx.mod, c, "mode", 0);
      bool on = v.all([&](const py::Literal& l) { return v.is_truthy_literal(l); }, false);
      if (!on) continue;
      ctx.report(c.node, "`torch.autograd.set_detect_anomaly(True)` is left on in a training program: every backward "
                         "pass that follows records and checks extra state, often several times slower");
      continue;
    }
    bool step_only = q == "torch.autograd.detect_anomaly" || q == "torch.autograd.profiler.emit_nvtx" ||
                     q == "torch.autograd.gradcheck" || q == "torch.autograd.gradgradcheck" ||
                     q == "torch.autograd.gradcheck.gradcheck" || q == "torch.autograd.gradcheck.gradgradcheck";
    if (!step_only) continue;
    auto sc = ctx.model.runs_every_step(ctx.mod, c.node);
    const py::Loop* L = ctx.model.enclosing_loop(ctx.mod, c.node);
    bool in_step = sc || (L && (L->kind == py::LoopKind::TrainStep || L->kind == py::LoopKind::EvalStep));
    if (!in_step) continue;
    std::string msg = "`" + std::string(q) + "` inside a step loop: a debugging API that slows every step it runs in";
    if (sc) ctx.report_per_step(c.node, msg, *sc);
    else ctx.report(c.node, msg);
  }
}

}  // namespace tl::rules
