// TL305 tensor-created-then-moved (C++): every step, a tensor factory with no device option whose
// result is immediately moved to CUDA (`torch::zeros({n}).to(device)`, `.cuda()`).
#include <cctype>
#include <string_view>

#include "analyzer/cpp/torch_names.h"
#include "rules/cpp/common.h"
#include "rules/cpp/rules.h"

namespace tl::cpp {

void check_tensor_created_then_moved(RuleContext& ctx) {
  const Model& m = ctx.model;
  for (auto& c : m.calls()) {
    if (!ctx.here(c) || !c.places_on_cuda || c.receiver_call < 0) continue;
    if (c.method != "to" && c.method != "cuda") continue;
    const CallSite& f = m.calls()[c.receiver_call];
    if (!f.method.empty() || !torch_names::is_tensor_factory(f.callee)) continue;
    // an option that names a device (or may: an options value the analysis cannot see); a
    // `torch::TensorOptions().dtype(torch::kFloat)` does not
    auto names_device = [](std::string_view a) {
      return a.find("device") != std::string_view::npos || a.find("kCUDA") != std::string_view::npos ||
             a.find("cuda") != std::string_view::npos;
    };
    bool has_device = false;
    for (size_t i = 0; i < f.args.size(); ++i) {
      const std::string& a = f.args[i];
      if (names_device(a) || a.find("options") != std::string::npos) has_device = true;
      bool ident = !a.empty() && (std::isalpha(static_cast<unsigned char>(a[0])) || a[0] == '_') &&
                   a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == std::string::npos;
      if (!ident || i == 0) continue;  // the first argument is the size
      int32_t v = m.lookup(f.tu, f.function, a, f.range.begin);
      if (v < 0) continue;  // a constant of a library or a macro: not an options object
      const Variable& var = m.variables()[v];
      if (var.type.kind == TypeKind::Device) has_device = true;
      if (var.type.kind != TypeKind::Unknown && var.type.kind != TypeKind::Other) continue;  // a tensor, a device...
      if (var.parameter || var.init.empty() || names_device(var.init)) has_device = true;
    }
    if (has_device) continue;
    std::string fn(torch_names::last(f.callee));
    auto sc = m.runs_every_step(c);
    if (!sc) continue;
    ctx.report_per_step(f,
                        "`torch::" + fn + "(...)` builds the tensor on the CPU and then copies it to the accelerator, "
                        "every step: a host allocation plus a synchronous host-to-device copy; pass the device in "
                        "its options (`torch::" + fn + "(..., torch::TensorOptions().device(device))`)",
                        *sc);
  }
}

}  // namespace tl::cpp
