// TL301 data-parallel: nn.DataParallel / nn.parallel.data_parallel.
#include "rules/python/common.h"
#include "rules/python/rules.h"

namespace tl::rules {

void check_data_parallel(RuleContext& ctx) {
  for (auto& c : ctx.mod.calls) {
    std::string_view q = c.qname;
    bool cls = qname_in(q, {"torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
                            "torch.nn.parallel.data_parallel.DataParallel"});
    bool fn = qname_in(q, {"torch.nn.parallel.data_parallel", "torch.nn.parallel.data_parallel.data_parallel"});
    if (!cls && !fn) continue;
    ctx.report(c.node, std::string(cls ? "`nn.DataParallel`" : "`nn.parallel.data_parallel()`") +
                           " drives every GPU from one Python process, replicating the model and scattering and "
                           "gathering data each step; use DistributedDataParallel (one process per GPU)");
  }
}

}  // namespace tl::rules
