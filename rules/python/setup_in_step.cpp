// TL107 setup-in-step: an object that should be built once is built every step.
#include "rules/python/common.h"
#include "rules/python/rules.h"

namespace tl::rules {
namespace {

// torch.nn layers with parameters or buffers: building one is building (part of) a model.
bool is_parameterised_layer(std::string_view q) {
  if (q.rfind("torch.nn.", 0) != 0) return false;
  std::string_view last = py::last_component(q);
  static const char* names[] = {"Linear", "Bilinear", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d",
                                "ConvTranspose2d", "ConvTranspose3d", "Embedding", "EmbeddingBag", "LSTM", "GRU",
                                "RNN", "LSTMCell", "GRUCell", "Transformer", "TransformerEncoder",
                                "TransformerDecoder", "TransformerEncoderLayer", "TransformerDecoderLayer",
                                "MultiheadAttention", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LayerNorm",
                                "GroupNorm", "Sequential", "ModuleList", "ModuleDict"};
  for (auto* n : names)
    if (last == n) return true;
  return false;
}

std::string setup_of(const RuleContext& ctx, const py::Call& c) {
  std::string_view q = c.qname;
  if (is_dataloader_ctor(q)) return "DataLoader(...)";
  if (q.rfind("torch.optim.", 0) == 0 && q.find("lr_scheduler") == std::string_view::npos && q.find(".swa_utils") == std::string_view::npos) {
    std::string_view last = py::last_component(q);
    if (!last.empty() && std::isupper(static_cast<unsigned char>(last[0])) && last != "Optimizer")
      return std::string(q) + "(...)";
  }
  if (py::last_component(q) == "GradScaler" && (q.rfind("torch.", 0) == 0)) return "GradScaler()";
  if (q.rfind("torchvision.models.", 0) == 0 && q.find(".detection.") == std::string_view::npos && q != "torchvision.models.get_weight") {
    std::string_view last = py::last_component(q);
    if (!last.empty() && std::islower(static_cast<unsigned char>(last[0])) && last.find("weights") == std::string_view::npos &&
        last != "list_models" && last != "get_model_weights")
      return std::string(q) + "(...)";
  }
  if (q == "timm.create_model") return "timm.create_model(...)";
  if (is_parameterised_layer(q)) return std::string(q) + "(...)";
  if (c.target_class && py::ProgramModel::is_nn_module_class(*c.target_class))
    return std::string(c.target_class->name) + "(...)";
  if ((c.method == "to" || c.method == "cuda") && c.receiver != py::kNone &&
      ctx.model.type_of(ctx.mod, c.receiver) == py::TypeKind::Module) {
    // a torch.nn layer without parameters or buffers made on the spot (`nn.Upsample(size=...)`,
    // an activation, a pooling): building and moving it copies nothing
    if (ctx.tree.is(c.receiver, py::K::Call))
      if (const py::Call* r = ctx.mod.call_at(c.receiver);
          r && r->qname.rfind("torch.nn.", 0) == 0 && !is_parameterised_layer(r->qname) &&
          r->qname.rfind("torch.nn.functional", 0) != 0 && !r->target_class)
        return "";
    // only a statement of its own (model.to(device)), not a chained expression
    return std::string(ctx.tree.text(c.receiver)) + "." + std::string(c.method) + "(...)";
  }
  return "";
}

}  // namespace

void check_setup_in_step(RuleContext& ctx) {
  for (auto& c : ctx.mod.calls) {
    std::string what = setup_of(ctx, c);
    if (what.empty()) continue;
    auto sc = ctx.model.runs_every_step(ctx.mod, c.node);
    if (!sc) continue;
    // inside a constructor that itself runs every step: reported once, at that constructor
    bool via_ctor = false;
    for (const py::Call* ch : sc->chain)
      if (ch->target_class) via_ctor = true;
    if (via_ctor) continue;
    ctx.report_per_step(c.node,
                        "`" + what + "` builds (or moves) an object that should be set up once, every step: its "
                        "construction cost, and for loaders their worker start-up, is paid on each iteration; build "
                        "it before the loop",
                        *sc);
  }
}

}  // namespace tl::rules
