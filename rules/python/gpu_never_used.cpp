// TL303 gpu-never-used: a training program (a step loop with .backward()) that imports torch and
// never places a model or tensor on an accelerator.
#include "rules/python/program_facts.h"
#include "rules/python/rules.h"

namespace tl::rules {

void check_gpu_never_used(RuleContext& ctx) {
  for (const py::Program* p : programs_entered_at(ctx.model, ctx.mod)) {
    if (p->uses_accelerator || !imports_prefix(*p, "torch")) continue;
    Anchor a = backward_anchor(ctx.model, *p);
    if (!a.call) continue;
    ctx.report_at(*a.mod, a.call->node,
                  "this training program never places a model or tensor on an accelerator (no `.cuda()`, no "
                  "`.to(<cuda device>)`, no `device=`): every step runs on the CPU while any GPU sits idle");
  }
}

}  // namespace tl::rules
