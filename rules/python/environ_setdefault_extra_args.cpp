// TL403 environ-setdefault-extra-args: os.environ.setdefault with more than two positional arguments.
#include "rules/python/common.h"
#include "rules/python/rules.h"

namespace tl::rules {

void check_environ_setdefault_extra_args(RuleContext& ctx) {
  for (auto& c : ctx.mod.calls) {
    if (c.qname != "os.environ.setdefault") continue;
    if (ctx.model.positional_count(ctx.mod, c) <= 2) continue;
    ctx.report(c.node, "`os.environ.setdefault` takes a key and a default: this call passes " +
                           std::to_string(ctx.model.positional_count(ctx.mod, c)) +
                           " arguments and raises TypeError when it runs, after the job has started");
  }
}

}  // namespace tl::rules
