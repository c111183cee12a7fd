// TL305 tensor-created-then-moved (C++): every step, a tensor factory with no device option whose
// result is immediately moved to CUDA (`torch::zeros({n}).to(device)`, `.cuda()`).
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
    bool has_device = false;
    for (auto& a : f.args)
      if (a.find("device") != std::string::npos || a.find("kCUDA") != std::string::npos ||
          a.find("TensorOptions") != std::string::npos || a.find("options") != std::string::npos)
        has_device = true;
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
