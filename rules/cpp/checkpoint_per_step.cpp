// TL103 checkpoint-per-step (C++): torch::save runs every step.
#include "rules/cpp/common.h"
#include "rules/cpp/rules.h"

namespace tl::cpp {

void check_checkpoint_per_step(RuleContext& ctx) {
  for (auto& c : ctx.model.calls()) {
    if (!ctx.here(c) || !c.method.empty() || c.callee != "torch::save") continue;
    report_if_per_step(ctx, c,
                       "`torch::save` saves a checkpoint every step: serialising and writing the state blocks the "
                       "training loop (and the GPU) on each iteration; save every N steps or once per epoch",
                       "`torch::save` saves a checkpoint every step: serialising and writing the state blocks the "
                       "training loop on each iteration, adding to every step's time; save every N steps or once per "
                       "epoch");
  }
}

}  // namespace tl::cpp
