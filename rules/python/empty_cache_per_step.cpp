// TL102 empty-cache-per-step: torch.cuda.empty_cache() runs every step.
#include "rules/python/common.h"
#include "rules/python/rules.h"

namespace tl::rules {

void check_empty_cache_per_step(RuleContext& ctx) {
  for (auto& c : ctx.mod.calls) {
    if (c.qname != "torch.cuda.empty_cache" && c.qname != "torch.cuda.memory.empty_cache") continue;
    report_if_per_step(ctx, c.node,
                       "`torch.cuda.empty_cache()` runs every step: it synchronises and hands cached blocks back to the "
                       "driver, so the next step pays for fresh cudaMalloc calls; it does not fix a leak");
  }
}

}  // namespace tl::rules
