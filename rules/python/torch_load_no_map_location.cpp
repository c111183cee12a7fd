// TL402 torch-load-no-map-location: torch.load(...) without map_location.
#include "rules/python/common.h"
#include "rules/python/fix_edits.h"
#include "rules/python/rules.h"

namespace tl::rules {

void check_torch_load_no_map_location(RuleContext& ctx) {
  for (auto& c : ctx.mod.calls) {
    if (c.qname != "torch.load" && c.qname != "torch.serialization.load") continue;
    if (ctx.model.keyword_arg(ctx.mod, c, "map_location") != py::kNone) continue;
    if (ctx.model.positional_arg(ctx.mod, c, 1) != py::kNone || ctx.model.has_splat(ctx.mod, c)) continue;
    Finding& f = ctx.report(c.node, "`torch.load` without `map_location`: a checkpoint saved from GPU tensors fails to load on a "
                       "CPU-only machine (and lands on the saving GPU elsewhere); pass `map_location=`");
    // Unsafe: the loaded tensors then live on the CPU, which code using them directly may not expect.
    Fix fix;
    fix.title = "Pass `map_location=\"cpu\"`";
    fix.applicability = Applicability::Unsafe;
    fix.edits = add_argument(ctx.mod, c.node, "map_location=\"cpu\"");
    if (!fix.edits.empty()) f.fix = std::move(fix);
  }
}

}  // namespace tl::rules
