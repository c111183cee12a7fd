// TL304 eval-without-no-grad: an evaluation loop that runs the model outside torch.no_grad() /
// torch.inference_mode() / a decorated function.
#include "rules/python/common.h"
#include "rules/python/rules.h"

namespace tl::rules {
namespace {

bool eval_name(std::string_view n) {
  return py::icontains(n, "validat") || py::icontains(n, "evaluat") || n == "test" || n == "eval" || n == "val" ||
         n.rfind("test_", 0) == 0 || n.rfind("eval_", 0) == 0 || n.rfind("val_", 0) == 0 || n == "run_eval" ||
         n == "run_validation";
}

bool grad_free_decorator(const std::string& d) {
  return d == "torch.no_grad" || d == "torch.inference_mode" || d == "torch.autograd.no_grad" ||
         d == "torch.autograd.grad_mode.no_grad" || d == "torch.autograd.grad_mode.inference_mode";
}

const std::initializer_list<std::string_view> kGradFree = {
    "torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad", "torch.set_grad_enabled",
    "torch.autograd.grad_mode.no_grad", "torch.autograd.set_grad_enabled"};

// f (or every analysed caller chain into it) runs with gradients off.
bool grad_free_function(const py::ProgramModel& model, const py::Function* f, int depth = 0) {
  if (!f || depth > 4) return false;
  for (auto& d : f->decorators)
    if (grad_free_decorator(d)) return true;
  const auto& callers = model.callers_of(f);
  if (callers.empty()) return false;
  for (const py::Call* c : callers) {
    if (model.inside_with(*c->mod, c->node, kGradFree)) continue;
    if (c->fn && grad_free_function(model, c->fn, depth + 1)) continue;
    return false;
  }
  return true;
}

// A call that runs a model: a known nn.Module, or a callable named like one.
bool runs_model(const RuleContext& ctx, const py::Call& c) {
  py::TypeKind k = ctx.model.type_of(ctx.mod, c.callee);
  if (k == py::TypeKind::Module) return true;
  if (k != py::TypeKind::Unknown || c.target || !c.qname.empty()) return false;
  std::string d = py::dotted_text(ctx.tree, c.callee);
  std::string_view last = py::last_component(d);
  return last == "model" || last == "net" || last == "network" || last == "module" || last == "ema_model" ||
         last == "encoder" || last == "decoder" || last == "classifier" || last == "backbone" ||
         last == "netG" || last == "netD" || last == "generator" || last == "discriminator";
}

// A loss criterion (`loss_fct = CrossEntropyLoss()`, `criterion(...)`, an analysed `FocalLoss`):
// called on the outputs of a forward pass, it records a graph only when they carry one, that is
// when the forward itself ran outside a grad-free block, and then the forward is reported.
bool is_criterion(const RuleContext& ctx, const py::Call& c) {
  std::string d = py::dotted_text(ctx.tree, c.callee);
  std::string_view last = py::last_component(d);
  if (py::icontains(last, "loss") || py::icontains(last, "criterion")) return true;
  for (const std::string& o : ctx.model.origins(ctx.mod, c.callee)) {
    std::string_view l = py::last_component(o);
    if (l.ends_with("Loss") || l.ends_with("Criterion")) return true;
  }
  return false;
}

}  // namespace

void check_eval_without_no_grad(RuleContext& ctx) {
  const auto& t = ctx.tree;
  for (auto& L : ctx.mod.loops) {
    if (L.kind != py::LoopKind::EvalStep || L.reaches_backward) continue;
    const py::Function* f = L.fn;
    bool eval_context = f && eval_name(f->name);
    if (!eval_context) {
      // a function or block that calls model.eval() before the loop
      static const std::vector<uint32_t> none;
      const auto& calls = f ? f->calls : none;
      for (uint32_t ci : calls) {
        const py::Call& c = ctx.mod.calls[ci];
        if (c.method == "eval" && c.receiver != py::kNone && ctx.model.positional_count(ctx.mod, c) == 0 &&
            t[c.node].start < t[L.node].start)
          eval_context = true;
      }
      if (!f)
        for (auto& c : ctx.mod.calls)
          if (!c.fn && c.method == "eval" && c.receiver != py::kNone && t[c.node].start < t[L.node].start &&
              ctx.model.positional_count(ctx.mod, c) == 0)
            eval_context = true;
    }
    if (!eval_context) continue;
    if (grad_free_function(ctx.model, f)) continue;
    // the first model call in the loop outside a grad-free block
    for (uint32_t ci : L.calls) {
      const py::Call& c = ctx.mod.calls[ci];
      if (c.fn != f || c.callee == py::kNone) continue;
      if (!runs_model(ctx, c) || is_criterion(ctx, c)) continue;
      if (ctx.model.inside_with(ctx.mod, c.node, kGradFree)) continue;
      ctx.report(c.node,
                 "the evaluation loop runs the model with autograd on: every forward pass records the graph and keeps "
                 "activations alive for a backward that never comes; wrap it in `torch.no_grad()` or "
                 "`torch.inference_mode()`",
                 {RuleContext::note_at(ctx.mod, L.node, "this evaluation step loop")});
      break;
    }
  }
}

}  // namespace tl::rules
