// TL202 dataloader-no-pin-memory: DataLoader without pin_memory=True in a program that trains on
// an accelerator.
#include "rules/python/common.h"
#include "rules/python/rules.h"

namespace tl::rules {

void check_dataloader_no_pin_memory(RuleContext& ctx) {
  if (!ctx.model.programs_use_accelerator(ctx.mod)) return;
  for (auto& c : ctx.mod.calls) {
    if (!is_dataloader_ctor(c.qname)) continue;
    if (one_shot_loader(ctx, c)) continue;
    py::ValueSet v = ctx.model.keyword_values(ctx.mod, c, "pin_memory", 7);
    bool all_false = v.all([&](const py::Literal& l) { return !v.is_truthy_literal(l); }, /*absent_ok=*/true);
    if (!all_false) continue;
    ctx.report(c.node, "DataLoader without `pin_memory=True` in a program that trains on an accelerator: every "
                       "host-to-device copy of a batch goes through pageable memory and cannot overlap compute");
  }
}

}  // namespace tl::rules
