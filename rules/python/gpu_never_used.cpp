// TL303 gpu-never-used: a training program (a step loop with .backward()) that shows it expects
// an accelerator (CUDA mentioned, a device option, NCCL) and never places a model or tensor on one.
#include "rules/python/program_facts.h"
#include "rules/python/rules.h"

namespace tl::rules {
namespace {

// A `.to(x)` / `device=x` argument known to be the CPU or a dtype (not a device at all).
bool provably_host(const py::ProgramModel& model, const py::Module& m, py::NodeId x, int depth) {
  const auto& t = m.tree;
  if (x == py::kNone || depth > 6) return false;
  if (t.is(x, py::K::String)) return !py::mentions_accelerator(t, x);
  if (t.is(x, py::K::Integer)) return false;  // a CUDA ordinal
  if (t.is(x, py::K::KeywordArgument)) return true;  // .to(dtype=...) and friends
  std::string d = py::dotted_text(t, x);
  if (!d.empty()) {
    std::string_view last = py::last_component(d);
    static const char* dtypes[] = {"float", "float16", "float32", "float64", "half", "double", "bfloat16", "long",
                                   "int", "int8", "int16", "int32", "int64", "uint8", "bool", "complex64", "dtype"};
    for (auto* dt : dtypes)
      if (last == dt) return true;
  }
  if (t.is(x, py::K::Call)) {
    const py::Call* c = m.call_at(x);
    if (c && c->qname == "torch.device") return provably_host(model, m, model.positional_arg(m, *c, 0), depth + 1);
    return false;
  }
  if (t.is(x, py::K::Identifier)) {
    auto* bs = model.bindings_of(m, x);
    if (!bs || bs->empty()) return false;
    for (auto& b : *bs)
      if (b.kind != py::Binding::Kind::Assign || !b.whole || !provably_host(model, m, b.value, depth + 1)) return false;
    return true;
  }
  return false;
}

}  // namespace

void check_gpu_never_used(RuleContext& ctx) {
  for (const py::Program* p : programs_entered_at(ctx.model, ctx.mod)) {
    if (p->uses_accelerator || !imports_prefix(*p, "torch")) continue;
    // A program with no sign of accelerator intent (a CPU tutorial, a CartPole agent) is on the
    // CPU on purpose.
    if (!p->accelerator_intent) continue;
    // A device the analysis cannot see (a parameter, `self.device` filled from one, an RPC
    // worker's argument) may well be a GPU: never claim the GPU is unused then.
    bool maybe_gpu = false;
    for (const py::Module* m : p->members) {
      for (auto& c : m->calls) {
        if (maybe_gpu) break;
        if (!ctx.model.runs_in_program(*p, *m, c.node)) continue;
        py::NodeId dev = py::kNone;
        if (c.method == "to" && c.receiver != py::kNone) dev = ctx.model.positional_arg(*m, c, 0);
        py::NodeId kw = ctx.model.keyword_arg(*m, c, "device");
        for (py::NodeId d : {dev, kw})
          if (d != py::kNone && !provably_host(ctx.model, *m, d, 0)) maybe_gpu = true;
      }
    }
    if (maybe_gpu) continue;
    Anchor a = backward_anchor(ctx.model, *p);
    if (!a.call) continue;
    ctx.report_at(*a.mod, a.call->node,
                  "this training program never places a model or tensor on an accelerator (no `.cuda()`, no "
                  "`.to(<cuda device>)`, no `device=`): every step runs on the CPU while any GPU sits idle");
  }
}

}  // namespace tl::rules
