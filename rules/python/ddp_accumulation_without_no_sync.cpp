// TL306 ddp-accumulation-without-no-sync: DDP + gradient accumulation (backward every step,
// optimizer step under a varying guard) without model.no_sync() around non-stepping backwards.
#include <algorithm>
#include <unordered_set>

#include "rules/python/program_facts.h"
#include "rules/python/rules.h"

namespace tl::rules {

bool is_ddp_ctor(std::string_view q);

namespace {

// Does the text of function f (or the step loop) handle DDP gradient sync itself?
bool handles_sync(std::string_view text) {
  return text.find("no_sync") != std::string_view::npos || text.find("require_backward_grad_sync") != std::string_view::npos ||
         text.find(".accumulate(") != std::string_view::npos;
}

}  // namespace

void check_ddp_accumulation_without_no_sync(RuleContext& ctx) {
  // only a training step loop of this module can report: a module without one (most of a
  // library) need not ask the program fact below, which looks at every member of every program
  // the module belongs to
  if (std::none_of(ctx.mod.loops.begin(), ctx.mod.loops.end(),
                   [](const py::Loop& L) { return L.kind == py::LoopKind::TrainStep; }))
    return;
  bool ddp = ctx.facts.any_in_programs(ctx.model, ctx.mod, "calls-ddp", [](const py::Module& m) {
    for (auto& c : m.calls)
      if (is_ddp_ctor(c.qname)) return true;
    return false;
  });
  if (!ddp) return;
  const auto& t = ctx.tree;
  for (auto& L : ctx.mod.loops) {
    if (L.kind != py::LoopKind::TrainStep) continue;
    // Accumulation: a backward that runs more often than the optimizer step. Either the step
    // sits under a varying guard while the backward runs every step (and gradients are not
    // zeroed every step), or the backward runs in a loop nested inside the step.
    // The calls of the step: those in the loop, and those of the analysed functions it calls (a
    // loss scaler's `__call__` that runs the backward and the optimizer step), each with the
    // call in the loop that leads to it.
    struct Reached {
      const py::Call* call;
      const py::Call* head;  // the call in the loop
    };
    std::vector<Reached> reached;
    {
      std::unordered_set<const py::Function*> seen;
      std::vector<std::pair<Reached, int>> work;
      for (uint32_t ci : L.calls) work.push_back({{&ctx.mod.calls[ci], &ctx.mod.calls[ci]}, 0});
      while (!work.empty()) {
        auto [r, depth] = work.back();
        work.pop_back();
        reached.push_back(r);
        const py::Function* g = r.call->target;
        if (!g || depth >= 3 || !seen.insert(g).second) continue;
        for (uint32_t ci : g->calls) work.push_back({{&g->mod->calls[ci], r.head}, depth + 1});
      }
      std::sort(reached.begin(), reached.end(), [](const Reached& a, const Reached& b) {
        if (a.head->node != b.head->node) return a.head->node < b.head->node;
        if (a.call->mod != b.call->mod) return a.call->mod->index < b.call->mod->index;
        return a.call->node < b.call->node;
      });
    }
    const py::Call* backward = nullptr;
    const py::Call* backward_head = nullptr;
    bool backward_nested = false;
    bool step_seen = false, step_every = false, zero_every = false;
    auto in_nested_loop = [&](const Reached& r) {
      const py::Loop* inner = ctx.model.enclosing_loop(ctx.mod, r.head->node);
      if (inner && inner != &L) return true;
      return r.call != r.head && ctx.model.enclosing_loop(*r.call->mod, r.call->node) != nullptr;
    };
    for (const Reached& r : reached) {
      const py::Call& c = *r.call;
      bool every = ctx.model.runs_every_step_of(*c.mod, c.node, ctx.mod, L.node);
      if (py::ProgramModel::is_backward(c) && !backward && every) {
        backward = &c;
        backward_head = r.head;
        backward_nested = in_nested_loop(r);
      }
      if (c.method == "zero_grad" && every && !in_nested_loop(r)) zero_every = true;
      if (ctx.model.is_optimizer_step(*c.mod, c)) {
        step_seen = true;
        if (every && !in_nested_loop(r)) step_every = true;
      }
    }
    if (!backward || !step_seen) continue;
    // the model run in this loop must be (possibly) DDP-wrapped
    bool ddp_model = false;
    for (uint32_t ci : L.calls) {
      const py::Call& c = ctx.mod.calls[ci];
      if (!c.method.empty() || c.callee == py::kNone) continue;
      for (auto& o : ctx.model.origins(ctx.mod, c.callee))
        if (is_ddp_ctor(o)) ddp_model = true;
      // a parameter: what the callers pass
      if (!ddp_model && t.is(c.callee, py::K::Identifier) && L.fn) {
        auto name = t.text(c.callee);
        for (size_t pi = 0; pi < L.fn->params.size(); ++pi) {
          if (L.fn->params[pi] != name) continue;
          for (const py::Call* cc : ctx.model.callers_of(L.fn)) {
            py::NodeId arg = ctx.model.keyword_arg(*cc->mod, *cc, name);
            if (arg == py::kNone) arg = ctx.model.positional_arg(*cc->mod, *cc, pi);
            if (arg == py::kNone) continue;
            for (auto& o : ctx.model.origins(*cc->mod, arg))
              if (is_ddp_ctor(o)) ddp_model = true;
          }
        }
      }
    }
    if (!ddp_model) continue;
    bool accumulates = backward_nested ? step_every : (!step_every && !zero_every);
    if (!accumulates) continue;
    // no_sync / require_backward_grad_sync / accelerator.accumulate anywhere in the loop's function
    const py::Function* f = L.fn;
    std::string_view scope_text = f ? t.text(f->def) : t.text(L.node);
    if (handles_sync(scope_text)) continue;
    bool helper_syncs = false;
    for (const Reached& r : reached)
      if (r.call != r.head && r.call->fn && handles_sync(r.call->mod->tree.text(r.call->fn->def))) helper_syncs = true;
    if (helper_syncs) continue;
    std::vector<Note> notes{RuleContext::note_at(ctx.mod, L.node, "the training step loop")};
    if (backward != backward_head)
      notes.push_back(RuleContext::note_at(*backward->mod, backward->node, "the backward pass this call runs"));
    ctx.report(backward_head->node,
               backward == backward_head
                   ? "`.backward()` runs every micro-step of gradient accumulation on a DistributedDataParallel model, "
                     "but the optimizer steps only every few: each non-stepping backward still pays a full gradient "
                     "all-reduce; wrap those in `with model.no_sync():`"
                   : "this call runs `.backward()` every micro-step of gradient accumulation on a "
                     "DistributedDataParallel model, but the optimizer steps only every few: each non-stepping "
                     "backward still pays a full gradient all-reduce; wrap those in `with model.no_sync():`",
               std::move(notes));
  }
}

}  // namespace tl::rules
