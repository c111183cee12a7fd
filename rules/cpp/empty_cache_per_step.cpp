// TL102 empty-cache-per-step (C++): c10::cuda::CUDACachingAllocator::emptyCache() every step.
#include "rules/cpp/common.h"
#include "rules/cpp/rules.h"

namespace tl::cpp {

void check_empty_cache_per_step(RuleContext& ctx) {
  for (auto& c : ctx.model.calls()) {
    if (!ctx.here(c) || !c.method.empty()) continue;
    if (c.callee != "c10::cuda::CUDACachingAllocator::emptyCache" && c.callee != "at::cuda::CUDACachingAllocator::emptyCache")
      continue;
    auto sc = ctx.model.runs_every_step(c);
    if (!sc) continue;
    ctx.report_per_step(c,
                        "`CUDACachingAllocator::emptyCache()` runs every step: it synchronises and hands cached blocks "
                        "back to the driver, so the next step pays for fresh cudaMalloc calls; it does not fix a leak",
                        *sc);
  }
}

}  // namespace tl::cpp
