// TL504 debug-api-left-on: set_detect_anomaly(True) anywhere in a training program, or
// detect_anomaly()/emit_nvtx()/gradcheck/gradgradcheck used inside a step loop.
#include "rules/python/program_facts.h"
#include "rules/python/rules.h"

namespace tl::rules {

namespace {

// `node` lies in a branch of an `if` whose condition names
// profiling, NVTX ranges, anomaly detection or debugging, up to its function.
bool under_diagnosis_switch(const py::Module& m, py::NodeId node) {
  const py::Tree& t = m.tree;
  for (py::NodeId n = node, p = t.parent(n); p != py::kNone; n = p, p = t.parent(p)) {
    if (t.is(p, py::K::FunctionDefinition) || t.is(p, py::K::ClassDefinition)) break;
    py::NodeId cond = py::kNone;
    if (t.is(p, py::K::IfStatement) || t.is(p, py::K::ElifClause))
      cond = t.field(p, py::F::Condition);
    if (cond == py::kNone || cond == n) continue;
    std::string text(t.text(cond));
    for (char& ch : text) ch = py::ascii_lower(ch);
    for (std::string_view w : {"profil", "nvtx", "anomal", "debug"})
      if (text.find(w) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

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
      // behind its own switch (`if cfg.debug.detect_anomaly:`): turned on when asked, not left on
      if (!on || under_diagnosis_switch(ctx.mod, c.node)) continue;
      ctx.report(c.node, "`torch.autograd.set_detect_anomaly(True)` is left on in a training program: every backward "
                         "pass that follows records and checks extra state, often several times slower");
      continue;
    }
    bool step_only = q == "torch.autograd.detect_anomaly" || q == "torch.autograd.profiler.emit_nvtx" ||
                     q == "torch.autograd.gradcheck" || q == "torch.autograd.gradgradcheck" ||
                     q == "torch.autograd.gradcheck.gradcheck" || q == "torch.autograd.gradcheck.gradgradcheck";
    if (!step_only) continue;
    // Every step: one turned on at a chosen step (`if iteration == args.profile_step_start:`) or
    // every N steps is a profile or a check taken on purpose, as is one behind a switch that
    // names what it is for (`if args.profile:`, `if cfg.debug_nans:`).
    auto sc = ctx.model.runs_every_step(ctx.mod, c.node);
    if (!sc || under_diagnosis_switch(ctx.mod, c.node)) continue;
    std::string msg = "`" + std::string(q) + "` inside a step loop: a debugging API that slows every step it runs in";
    ctx.report_per_step(c.node, msg, *sc);
  }
}

}  // namespace tl::rules
