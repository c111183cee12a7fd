// TL305 tensor-created-then-moved: every step, a factory call with no device= whose result is
// immediately .cuda()/.to(<accelerator device>), or `.type_as(x)` / `.to(x.device)` of an `x`
// known to be on the accelerator.
#include <optional>

#include "rules/python/common.h"
#include "rules/python/fix_edits.h"
#include "rules/python/rules.h"

namespace tl::rules {
namespace {

// `torch.zeros(n).to(d)` / `.to(device=d)` / `.cuda()` -> `torch.zeros(n, device=d)`: the device
// moves into the factory and the move goes. None when the move has any other argument (dtype,
// non_blocking, copy, a `.cuda(1)` index), which `device=` alone would not keep.
std::optional<Fix> device_fix(RuleContext& ctx, const py::Call& move, const py::Call& factory) {
  const auto& t = ctx.tree;
  py::NodeId args = t.field(move.node, py::F::Arguments);
  if (args == py::kNone || !t.is(args, py::K::ArgumentList)) return std::nullopt;
  std::vector<py::NodeId> items;
  for (py::NodeId a : t.named_child_range(args))
    if (!t.is(a, py::K::Comment)) items.push_back(a);
  std::string device;
  if (move.method == "cuda") {
    if (!items.empty()) return std::nullopt;
    device = "\"cuda\"";
  } else {
    if (items.size() != 1) return std::nullopt;
    py::NodeId d = items[0];
    if (t.is(d, py::K::KeywordArgument)) {
      py::NodeId k = t.field(d, py::F::Name);
      if (k == py::kNone || t.text(k) != "device") return std::nullopt;
      d = t.field(d, py::F::Value);
    } else if (t.is(d, py::K::ListSplat) || t.is(d, py::K::DictionarySplat)) {
      return std::nullopt;
    }
    if (d == py::kNone) return std::nullopt;
    device = std::string(t.text(d));
  }
  Fix fix;
  fix.title = "Pass `device=" + device + "` to the factory";
  fix.applicability = Applicability::Safe;
  fix.edits = add_argument(ctx.mod, factory.node, "device=" + device);
  if (fix.edits.empty()) return std::nullopt;
  fix.edits.push_back(edit_bytes(ctx.mod, t[factory.node].end, t[move.node].end, ""));
  return fix;
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
    // `.type_as(x)` copies to x's device: the accelerator when x is known to be there
    if (c.method == "type_as") {
      py::NodeId other = ctx.model.positional_arg(ctx.mod, c, 0);
      to_accel = other != py::kNone && ctx.model.on_accelerator(ctx.mod, other);
    }
    if (!to_accel) continue;
    const py::Call* f = ctx.mod.call_at(c.receiver);
    if (!f || !is_tensor_factory(f->qname)) continue;
    if (ctx.model.keyword_arg(ctx.mod, *f, "device") != py::kNone || ctx.model.has_splat(ctx.mod, *f)) continue;
    std::string fn(py::last_component(f->qname));
    Finding* fd = report_if_per_step(ctx, c.node,
                       "`torch." + fn + "(...)` builds the tensor on the CPU and then copies it to the accelerator, "
                       "every step: a host allocation plus a synchronous host-to-device copy; pass `device=` to `torch." +
                           fn + "`");
    if (fd && c.method != "type_as") fd->fix = device_fix(ctx, c, *f);
  }
}

}  // namespace tl::rules
