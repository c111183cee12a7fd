// TL101 gc-collect-per-step: `gc.collect()` runs every step.
#include "rules/python/common.h"
#include "rules/python/rules.h"

namespace tl::rules {

void check_gc_collect_per_step(RuleContext& ctx) {
  for (auto& c : ctx.mod.calls) {
    if (c.qname != "gc.collect") continue;
    report_if_per_step(ctx, c.node,
                       "`gc.collect()` runs every step: a full garbage-collection pass stalls the host, and the "
                       "GPU waiting on it, on each iteration",
                       "`gc.collect()` runs every step: a full garbage-collection pass stalls the process on each "
                       "iteration, adding to every step's time");
  }
}

}  // namespace tl::rules
