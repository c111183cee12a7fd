// TL301 data-parallel: nn.DataParallel / nn.parallel.data_parallel.
#include <vector>

#include "rules/python/common.h"
#include "rules/python/rules.h"

namespace tl::rules {

// One cause, one finding: a module that wraps its model in DataParallel for training and again in
// its evaluation function (transformers' example scripts: `if args.n_gpu > 1 and not
// isinstance(model, torch.nn.DataParallel): model = torch.nn.DataParallel(model)` in `evaluate()`)
// is told once, at the training wrap, with the other wraps as notes: the fix (one process per GPU
// from the launcher) is one change. A wrap whose function neither runs a backward pass nor steps
// an optimizer is such an other wrap when the module has a training one; a module with only such
// wraps gets a finding at each.
void check_data_parallel(RuleContext& ctx) {
  struct Wrap {
    const py::Call* call;
    bool cls;
  };
  std::vector<Wrap> training, other;
  for (auto& c : ctx.mod.calls) {
    std::string_view q = c.qname;
    bool cls = qname_in(q, {"torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
                            "torch.nn.parallel.data_parallel.DataParallel"});
    bool fn = qname_in(q, {"torch.nn.parallel.data_parallel", "torch.nn.parallel.data_parallel.data_parallel"});
    if (!cls && !fn) continue;
    bool trains = !c.fn || c.fn->reaches_opt_step || c.fn->reaches_backward;
    (trains ? training : other).push_back({&c, cls});
  }
  auto message = [](bool cls) {
    return std::string(cls ? "`nn.DataParallel`" : "`nn.parallel.data_parallel()`") +
           " drives every GPU from one Python process, replicating the model and scattering and gathering data "
           "each step; use DistributedDataParallel (one process per GPU)";
  };
  if (training.empty()) {
    for (auto& w : other) ctx.report(w.call->node, message(w.cls));
    return;
  }
  for (size_t i = 0; i < training.size(); ++i) {
    Finding& f = ctx.report(training[i].call->node, message(training[i].cls));
    if (i == 0)
      for (auto& w : other)
        f.notes.push_back(RuleContext::note_at(ctx.mod, w.call->node,
                                               "wrapped again here, in code that does not train (an evaluation): "
                                               "launching one process per GPU fixes both"));
  }
}

}  // namespace tl::rules
