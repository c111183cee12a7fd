// TL401 tensor-to-discarded (C++): `x.to(...)` (and cuda/cpu/half/float/double/bfloat16) as an
// expression statement on a receiver the model knows is an at::Tensor.
#include "rules/cpp/common.h"
#include "rules/cpp/rules.h"

namespace tl::cpp {

void check_tensor_to_discarded(RuleContext& ctx) {
  for (auto& c : ctx.model.calls()) {
    if (!ctx.here(c) || !c.discarded || c.arrow) continue;
    const std::string& m = c.method;
    if (m != "to" && m != "cuda" && m != "cpu" && m != "half" && m != "float" && m != "double" && m != "bfloat16") continue;
    if (c.receiver_type.kind != TypeKind::Tensor) continue;
    const std::string& r = c.receiver;
    Finding& f = ctx.report(c, "`" + r + "." + m + "(...)` returns a new tensor and the result is dropped: `" + r +
                                   "` is unchanged (only `torch::nn::Module::to()` works in place); assign it: `" + r +
                                   " = " + r + "." + m + "(...)`");
    bool plain = !r.empty();
    for (char ch : r)
      if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_')) plain = false;
    if (plain) {
      Fix fix;
      fix.title = "Assign the result back to `" + r + "`";
      Edit ed;
      ed.range = c.range;
      ed.range.end = ed.range.begin;
      ed.range.stop = ed.range.start;
      ed.replacement = r + " = ";
      fix.edits.push_back(ed);
      f.fix = std::move(fix);
    }
  }
}

}  // namespace tl::cpp
