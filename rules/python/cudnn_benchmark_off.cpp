// TL501 cudnn-benchmark-off: a program training convolution layers on an accelerator never sets
// torch.backends.cudnn.benchmark = True.
#include "rules/python/program_facts.h"
#include "rules/python/rules.h"

namespace tl::rules {

void check_cudnn_benchmark_off(RuleContext& ctx) {
  for (const py::Program* p : programs_entered_at(ctx.model, ctx.mod)) {
    if (!p->uses_accelerator) continue;
    // Facts of the code the program runs, not of every function its modules define.
    const py::ProgramModel& model = ctx.model;
    bool conv = ctx.facts.any_site_in_program(ctx.model, *p, "builds-conv", [&model](const py::Module& m) {
      std::vector<py::NodeId> out;
      for (auto& c : m.calls) {
        std::string_view q = c.qname;
        if (q.rfind("torch.nn.", 0) != 0) continue;
        std::string_view last = py::last_component(q);
        if (!(last.rfind("Conv", 0) == 0 || last.rfind("LazyConv", 0) == 0)) continue;
        // a patch embedding (`Conv2d(in_chans, dim, kernel_size=patch, stride=patch)`): one
        // non-overlapping projection per patch, which cuDNN runs as a matrix multiply whatever
        // the mode; a vision transformer trains no convolutions that benchmark mode would tune
        bool lazy = last.rfind("LazyConv", 0) == 0;
        py::NodeId k = model.keyword_arg(m, c, "kernel_size"), st = model.keyword_arg(m, c, "stride");
        if (k == py::kNone) k = model.positional_arg(m, c, lazy ? 1 : 2);
        if (st == py::kNone) st = model.positional_arg(m, c, lazy ? 2 : 3);
        if (k != py::kNone && st != py::kNone && m.tree.text(k) == m.tree.text(st) && m.tree.text(k) != "1") continue;
        out.push_back(c.node);
      }
      return out;
    });
    if (!conv) continue;
    // Any assignment counts as a decision: `benchmark = True`, or `benchmark = False` next to
    // `deterministic = True` for reproducibility, or a value from the command line. Asking for
    // deterministic algorithms (`cudnn.deterministic = ...`, `torch.use_deterministic_algorithms`)
    // is a decision too: benchmark mode picks its algorithms nondeterministically.
    bool sets = ctx.facts.any_site_in_program(ctx.model, *p, "decides-cudnn-algorithms", [](const py::Module& m) {
      std::vector<py::NodeId> out;
      const py::Tree& t = m.tree;
      auto decides = [&](py::NodeId target) {
        // the attribute's last name first: most assignments are to other names (no string built)
        if (target == py::kNone || !t.is(target, py::K::Attribute)) return false;
        py::NodeId name = t.field(target, py::F::Attribute);
        if (name == py::kNone || (t.text(name) != "benchmark" && t.text(name) != "deterministic")) return false;
        std::string d = py::dotted_text(t, target);
        return d.ends_with("cudnn.benchmark") || d.ends_with("cudnn.deterministic");
      };
      for (py::NodeId a : m.assignments) {
        py::NodeId left = t.field(a, py::F::Left);
        bool decided = decides(left);
        // also one target of several: `cudnn.benchmark, cudnn.deterministic = True, False`
        if (!decided && left != py::kNone &&
            (t.is(left, py::K::PatternList) || t.is(left, py::K::TuplePattern) || t.is(left, py::K::Tuple) ||
             t.is(left, py::K::ExpressionList)))
          for (py::NodeId target : t.named_child_range(left))
            if (!decided) decided = decides(target);
        if (decided) out.push_back(a);
      }
      for (auto& c : m.calls)
        if (c.qname == "torch.use_deterministic_algorithms") out.push_back(c.node);
      return out;
    });
    if (sets) continue;
    Anchor a = backward_anchor(ctx.model, *p);
    if (!a.call) continue;
    ctx.report_at(*a.mod, a.call->node,
                  "this program trains convolution layers on an accelerator without "
                  "`torch.backends.cudnn.benchmark = True`: cuDNN keeps its default algorithms instead of timing the "
                  "fastest one for your input shapes");
  }
}

}  // namespace tl::rules
