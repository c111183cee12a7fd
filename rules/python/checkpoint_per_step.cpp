// TL103 checkpoint-per-step: a model/optimizer/state save runs every step.
#include "rules/python/common.h"
#include "rules/python/rules.h"

namespace tl::rules {
namespace {

// Does the saved object look like model or optimizer state?
bool looks_like_state(const py::Tree& t, py::NodeId obj) {
  if (obj == py::kNone) return false;
  auto s = t.text(obj);
  for (auto w : {"state_dict", "model", "optim", "ckpt", "checkpoint", "net", "weights", "params"})
    if (py::icontains(s, w)) return true;
  return false;
}

std::string what_of(const py::Call& c, std::string_view q) {
  if (!q.empty()) return std::string(q);
  return "." + std::string(c.method) + "()";
}

}  // namespace

void check_checkpoint_per_step(RuleContext& ctx) {
  const auto& t = ctx.tree;
  for (auto& c : ctx.mod.calls) {
    std::string_view q = c.qname;
    bool hit = false;
    bool writes_tensors = false;  // torch.save / save_file: of state, or of any tensors
    if (qname_in(q, {"torch.save", "torch.jit.save", "safetensors.torch.save_file", "safetensors.torch.save_model"})) {
      hit = true;
      writes_tensors = qname_in(q, {"torch.save", "safetensors.torch.save_file"});
    } else if (c.method == "save_pretrained" && c.receiver != py::kNone) {
      hit = true;
    } else if ((c.method == "save_state" || c.method == "save_model") && c.receiver != py::kNone) {
      std::string d = py::dotted_text(t, c.receiver);
      if (py::icontains(d, "accelerator")) hit = true;
      for (auto& o : ctx.model.origins(ctx.mod, c.receiver))
        if (o.rfind("accelerate.", 0) == 0) hit = true;
    } else if (c.method == "save_checkpoint" && c.receiver != py::kNone) {
      std::string d = py::dotted_text(t, c.receiver);
      if (py::icontains(d, "trainer") || py::icontains(d, "engine")) hit = true;
      for (auto& o : ctx.model.origins(ctx.mod, c.receiver))
        if (py::last_component(o) == "Trainer") hit = true;
    } else if (qname_in(q, {"pickle.dump", "joblib.dump", "torch.serialization.save"})) {
      hit = looks_like_state(t, ctx.model.positional_arg(ctx.mod, c, 0));
    } else if (qname_in(q, {"numpy.save", "numpy.savez", "numpy.savez_compressed"})) {
      hit = looks_like_state(t, ctx.model.positional_arg(ctx.mod, c, 1));
    }
    if (!hit) continue;
    auto sc = ctx.model.runs_every_step(ctx.mod, c.node, false);
    if (!sc) continue;
    // a loop without a backward pass that writes what it computes per batch (the mel spectrograms
    // of a dataset-preparation pass, extracted features): its output, not a checkpoint
    if (writes_tensors && sc->kind == py::LoopKind::EvalStep &&
        !looks_like_state(t, ctx.model.positional_arg(ctx.mod, c, 0)))
      continue;
    ctx.report_per_step(c.node,
                        trains_on_accelerator(ctx, &*sc)
                            ? "`" + what_of(c, q) +
                                  "` saves a checkpoint every step: serialising and writing the state blocks the "
                                  "training loop (and the GPU) on each iteration; save every N steps or once per epoch"
                            : "`" + what_of(c, q) +
                                  "` saves a checkpoint every step: serialising and writing the state blocks the "
                                  "training loop on each iteration, adding to every step's time; save every N steps or "
                                  "once per epoch",
                        *sc);
  }
}

}  // namespace tl::rules
