// TL305 tensor-created-then-moved: every step, a factory call with no device= whose result is
// immediately .cuda()/.to(<accelerator device>).
#include "rules/python/common.h"
#include "rules/python/rules.h"

namespace tl::rules {
namespace {

bool is_factory(std::string_view q) {
  static const char* names[] = {"zeros", "ones", "empty", "full", "rand", "randn", "randint", "arange",
                                "linspace", "eye", "tensor", "as_tensor"};
  if (q.rfind("torch.", 0) != 0) return false;
  std::string_view rest = q.substr(6);
  for (auto* n : names)
    if (rest == n) return true;
  return false;
}

}  // namespace

void check_tensor_created_then_moved(RuleContext& ctx) {
  const auto& t = ctx.tree;
  for (auto& c : ctx.mod.calls) {
    if (c.receiver == py::kNone || !t.is(c.receiver, py::K::Call)) continue;
    bool to_accel = false;
    if (c.method == "cuda") to_accel = true;
    if (c.method == "to") {
      py::NodeId d = ctx.model.positional_arg(ctx.mod, c, 0);
      if (d == py::kNone) d = ctx.model.keyword_arg(ctx.mod, c, "device");
      to_accel = d != py::kNone && ctx.model.is_accelerator_device(ctx.mod, d);
    }
    if (!to_accel) continue;
    const py::Call* f = ctx.mod.call_at(c.receiver);
    if (!f || !is_factory(f->qname)) continue;
    if (ctx.model.keyword_arg(ctx.mod, *f, "device") != py::kNone || ctx.model.has_splat(ctx.mod, *f)) continue;
    std::string fn(py::last_component(f->qname));
    report_if_per_step(ctx, c.node,
                       "`torch." + fn + "(...)` builds the tensor on the CPU and then copies it to the accelerator, "
                       "every step: a host allocation plus a synchronous host-to-device copy; pass `device=` to `torch." +
                           fn + "`");
  }
}

}  // namespace tl::rules
