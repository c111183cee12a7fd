// TL307 ddp-find-unused-parameters: DistributedDataParallel(..., find_unused_parameters=True).
#include "rules/python/common.h"
#include "rules/python/rules.h"

namespace tl::rules {

bool is_ddp_ctor(std::string_view q) {
  return q == "torch.nn.parallel.DistributedDataParallel" || q == "torch.nn.parallel.distributed.DistributedDataParallel" ||
         q == "torch.nn.DistributedDataParallel";
}

void check_ddp_find_unused_parameters(RuleContext& ctx) {
  for (auto& c : ctx.mod.calls) {
    if (!is_ddp_ctor(c.qname)) continue;
    py::ValueSet v = ctx.model.keyword_values(ctx.mod, c, "find_unused_parameters");
    bool on = v.all([&](const py::Literal& l) { return v.is_truthy_literal(l); }, false);
    if (!on) continue;
    ctx.report(c.node, "`find_unused_parameters=True` makes DDP traverse the autograd graph after every forward pass "
                       "to find parameters that got no gradient; only needed when some really get none");
  }
}

}  // namespace tl::rules
