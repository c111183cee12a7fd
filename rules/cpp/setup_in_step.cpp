// TL107 setup-in-step (C++): torch::data::make_data_loader and torch::optim::* construction in a
// step.
#include "analyzer/cpp/torch_names.h"
#include "rules/cpp/common.h"
#include "rules/cpp/rules.h"

namespace tl::cpp {

void check_setup_in_step(RuleContext& ctx) {
  for (auto& c : ctx.model.calls()) {
    if (!ctx.here(c) || !c.method.empty()) continue;
    std::string what;
    if (c.result.kind == TypeKind::DataLoader) what = "torch::data::make_data_loader";
    else if (c.construction && c.result.kind == TypeKind::Optimizer) what = c.result.name;
    if (what.empty()) continue;
    auto sc = ctx.model.runs_every_step(c);
    if (!sc) continue;
    ctx.report_per_step(c,
                        "`" + what + "` builds an object that should be set up once, every step: its construction "
                        "cost, and for loaders their worker start-up, is paid on each iteration; build it before the "
                        "loop",
                        *sc);
  }
}

}  // namespace tl::cpp
