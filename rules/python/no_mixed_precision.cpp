// TL502 no-mixed-precision: a program training on an accelerator with no autocast, GradScaler,
// bf16/fp16 dtype, or framework precision setting.
#include "rules/python/program_facts.h"
#include "rules/python/rules.h"

namespace tl::rules {
namespace {

std::vector<py::NodeId> low_precision_sites(const py::Module& m) {
  std::vector<py::NodeId> out;
  const auto& t = m.tree;
  for (py::NodeId n = 0; n < t.size(); ++n) {
    py::K k = t.kind(n);
    if (k == py::K::Attribute || k == py::K::Identifier) {
      auto s = t.text(n);
      if (s.size() > 80) continue;
      auto last = py::last_component(s);
      if (last == "bfloat16" || last == "float16" || last == "half" || last == "autocast" || last == "GradScaler" ||
          last == "amp")
        out.push_back(n);
    } else if (k == py::K::String) {
      auto s = t.text(n);
      if (s.size() < 40 && (s.find("bfloat16") != std::string_view::npos || s.find("float16") != std::string_view::npos ||
                            s.find("bf16") != std::string_view::npos || s.find("fp16") != std::string_view::npos ||
                            s.find("16-mixed") != std::string_view::npos))
        out.push_back(n);
    }
  }
  return out;
}

bool graph_library(std::string_view q) {
  for (std::string_view lib : {"torch_geometric", "dgl", "torch_scatter", "torch_sparse", "torch_cluster"})
    if (q.rfind(lib, 0) == 0 && (q.size() == lib.size() || q[lib.size()] == '.')) return true;
  return false;
}

// A graph neural network: the entry script, or a module holding a class the program uses, imports
// a message-passing library (PyG, DGL, their scatter/sparse kernels). Its steps are gathers and
// scatters over edges, which autocast leaves in fp32 or which gain little from tensor cores, and
// its dense layers are narrow: bf16/fp16 is no missed speed-up there (rules/docs/TL502).
bool graph_network_program(const py::ProgramModel& model, const py::Program& p) {
  auto imports_graph_library = [](const py::Module& m) {
    for (auto& q : m.imported_modules)
      if (graph_library(q)) return true;
    return graph_library(m.dotted);
  };
  if (p.entry && imports_graph_library(*p.entry)) return true;
  for (uint32_t id : p.reached_class_ids) {
    const py::Class* c = model.classes()[id];
    if (c && c->mod && imports_graph_library(*c->mod)) return true;
  }
  return false;
}

// Reinforcement learning: code the program runs steps an environment (`env.step(action)`,
// `envs.step(...)`, a gym/gymnasium environment). Its networks are small MLPs or the Nature CNN fed
// small batches; a step waits on kernel launches and on the environment, not on matrix throughput.
bool steps_environment(const py::ProgramModel& model, const py::Program& p) {
  return any_call(model, p, [&](const py::Module& m, const py::Call& c) { return model.steps_environment(m, c, false); });
}

}  // namespace

void check_no_mixed_precision(RuleContext& ctx) {
  for (const py::Program* p : programs_entered_at(ctx.model, ctx.mod)) {
    if (!p->uses_accelerator) continue;
    // Facts of the code the program runs, not of every function its modules define.
    bool mixed = ctx.facts.any_site_in_program(ctx.model, *p, "mentions-low-precision",
                                               [](const py::Module& m) { return low_precision_sites(m); });
    // framework precision switches: Trainer(precision=16), Accelerator(mixed_precision=...), fp16=True
    if (!mixed)
      mixed = any_call(ctx.model, *p, [&](const py::Module& m, const py::Call& c) {
        for (auto kw : {"precision", "mixed_precision", "fp16", "bf16", "amp", "use_amp"}) {
          py::NodeId v = ctx.model.keyword_arg(m, c, kw);
          if (v == py::kNone) continue;
          if (m.tree.is(v, py::K::False) || m.tree.is(v, py::K::None)) continue;
          auto s = m.tree.text(v);
          if (s == "32" || s == "\"32\"" || s == "'32'" || s == "\"no\"" || s == "'no'" || s == "\"32-true\"") continue;
          return true;
        }
        return false;
      });
    // Accelerator() / Fabric() without an explicit precision take it from `accelerate launch`,
    // `accelerate config` or `fabric run`, and a DeepSpeed engine from its JSON configuration:
    // not decidable from the code.
    if (!mixed)
      mixed = any_call(ctx.model, *p, [&](const py::Module& m, const py::Call& c) {
        std::string_view q = c.qname;
        bool launcher = q.rfind("accelerate.Accelerator", 0) == 0 || q == "lightning.fabric.Fabric" ||
                        q == "lightning.Fabric" || q == "lightning_fabric.Fabric";
        if (launcher)
          return ctx.model.keyword_arg(m, c, "mixed_precision") == py::kNone &&
                 ctx.model.keyword_arg(m, c, "precision") == py::kNone;
        // deepspeed.initialize() takes its fp16/bf16 sections from its configuration: a dict
        // written in the code is read like any other code (its "fp16" keys), while a JSON file
        // (`--deepspeed_config`, `config="ds_config.json"`, `args=args`) is not seen
        if (q == "deepspeed.initialize") {
          for (auto kw : {"config", "config_params"}) {
            py::NodeId v = ctx.model.keyword_arg(m, c, kw);
            if (v != py::kNone && m.tree.is(v, py::K::Dictionary)) return false;
          }
          return true;
        }
        return false;
      });
    if (mixed || graph_network_program(ctx.model, *p) || steps_environment(ctx.model, *p)) continue;
    Anchor a = backward_anchor(ctx.model, *p);
    if (!a.call) continue;
    ctx.report_at(*a.mod, a.call->node,
                  "this program trains on an accelerator in full fp32 precision: no `torch.autocast`, `GradScaler`, "
                  "bf16/fp16 dtype or framework precision setting; tensor cores run bf16/fp16 matrix work several "
                  "times faster and halve activation memory");
  }
}

}  // namespace tl::rules
