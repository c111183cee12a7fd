// TL301 data-parallel (C++): torch::nn::parallel::data_parallel.
#include "rules/cpp/common.h"
#include "rules/cpp/rules.h"

namespace tl::cpp {

void check_data_parallel(RuleContext& ctx) {
  for (auto& c : ctx.model.calls()) {
    if (!ctx.here(c) || !c.method.empty()) continue;
    if (c.callee != "torch::nn::parallel::data_parallel") continue;
    ctx.report(c,
               "`torch::nn::parallel::data_parallel()` drives every GPU from one thread, replicating the module and "
               "scattering and gathering data each step; use distributed data parallel training (one process per "
               "GPU, torch::distributed)");
  }
}

}  // namespace tl::cpp
