// Small matching helpers shared by the Python rules. Loop, guard, and value logic lives in the
// model (analyzer/python), never here.
#pragma once
#include <initializer_list>
#include <string>
#include <string_view>

#include "rules/python/rule_context.h"

namespace tl::rules {

inline bool qname_in(std::string_view q, std::initializer_list<std::string_view> names) {
  for (auto n : names)
    if (q == n) return true;
  return false;
}

// A tensor factory (`torch.zeros(...)`, `torch.tensor(...)`; `*_like` excluded: those follow their
// argument's device).
inline bool is_tensor_factory(std::string_view q) {
  return qname_in(q, {"torch.zeros", "torch.ones", "torch.empty", "torch.full", "torch.rand", "torch.randn",
                      "torch.randint", "torch.arange", "torch.linspace", "torch.eye", "torch.tensor",
                      "torch.as_tensor"});
}

// The DataLoader constructor, under any of its import paths.
inline bool is_dataloader_ctor(std::string_view q) {
  return q == "torch.utils.data.DataLoader" || q == "torch.utils.data.dataloader.DataLoader";
}

// The values a DataLoader call's `num_workers` (keyword, or its 6th argument) may have.
inline py::ValueSet worker_values(const RuleContext& ctx, const py::Call& loader) {
  return ctx.model.keyword_values(ctx.mod, loader, "num_workers", 5);
}

// `num_workers` absent or known to be 0 (a literal, or a name whose only value in the program is
// 0): batches are loaded in the training process.
inline bool loads_in_process(const py::ValueSet& workers) {
  return workers.all([](const py::Literal& l) { return l.kind == py::Literal::Kind::Int && l.text == "0"; },
                     /*absent_ok=*/true);
}

// `next(iter(x))` around `x`: `x` is the only argument of `iter`, itself the argument of `next`.
inline bool next_of_iter(const RuleContext& ctx, py::NodeId x) {
  const auto& t = ctx.tree;
  py::NodeId p = t.parent(x);  // argument_list
  if (p == py::kNone || !t.is(p, py::K::ArgumentList)) return false;
  const py::Call* it = ctx.mod.call_at(t.parent(p));
  if (!it || it->qname != "builtins.iter") return false;
  py::NodeId p2 = t.parent(it->node);
  if (p2 == py::kNone || !t.is(p2, py::K::ArgumentList)) return false;
  const py::Call* nx = ctx.mod.call_at(t.parent(p2));
  return nx && nx->qname == "builtins.next";
}

// A throwaway loader that yields one batch now and then: `next(iter(DataLoader(...)))` (a sample
// grid in a callback), or a loader bound to a name whose every use in the module is such a
// `next(iter(val_loader))` that does not run every step (the validation images a GAN script draws
// in its periodic `sample_images`, a batch read once before training). Per-batch loading costs do
// not apply to it.
inline bool one_shot_loader(const RuleContext& ctx, const py::Call& c) {
  const auto& t = ctx.tree;
  if (next_of_iter(ctx, c.node)) return true;
  py::NodeId a = t.parent(c.node);
  if (a == py::kNone || !t.is(a, py::K::Assignment) || t.field(a, py::F::Right) != c.node) return false;
  py::NodeId target = t.field(a, py::F::Left);
  if (target == py::kNone || !t.is(target, py::K::Identifier)) return false;
  std::string_view name = t.text(target);
  bool used = false;
  for (py::NodeId n = 0; n < t.size(); ++n) {
    if (n == target || !t.is(n, py::K::Identifier) || t.text(n) != name) continue;
    py::NodeId up = t.parent(n);
    // `obj.val_loader` is another name; a keyword argument's name is no read
    if (up != py::kNone && t.is(up, py::K::Attribute) && t.field(up, py::F::Attribute) == n) continue;
    if (up != py::kNone && t.is(up, py::K::KeywordArgument) && t.field(up, py::F::Name) == n) continue;
    if (!next_of_iter(ctx, n) || ctx.model.runs_every_step(ctx.mod, n)) return false;
    used = true;
  }
  return used;
}

// `.to(torch.long)`, `.to(dtype=...)` in module `m`: a cast that moves nothing.
inline bool dtype_cast_in(const py::ProgramModel& model, const py::Module& m, const py::Call& c) {
  const auto& t = m.tree;
  if (c.method != "to" || c.receiver == py::kNone || model.keyword_arg(m, c, "device") != py::kNone) return false;
  py::NodeId a = model.positional_arg(m, c, 0);
  if (a == py::kNone) return model.keyword_arg(m, c, "dtype") != py::kNone;
  if (model.positional_arg(m, c, 1) != py::kNone || !t.is(a, py::K::Attribute)) return false;
  std::string d = py::dotted_text(t, a);
  return d.starts_with("torch.") && d != "torch.device";
}

// A loader whose `collate_fn` (keyword, or the 7th argument) moves the batch to a device itself:
// `.to(device)` or `.cuda()` in the function, in one it calls, in a lambda, or in the function a
// `functools.partial(collate, device="cuda:0")` binds. Worker processes would each have to start
// CUDA to run it (forked workers cannot), and a batch already on the device cannot be pinned:
// neither TL201's nor TL202's advice applies as it stands.
inline bool collate_moves_to_device(const RuleContext& ctx, const py::Call& loader) {
  const auto& model = ctx.model;
  auto moves = [&](const py::Module& m, const py::Call& c) {
    if (c.receiver == py::kNone) return false;
    if (c.method == "cuda") return true;
    if (c.method != "to" || dtype_cast_in(model, m, c)) return false;
    py::NodeId a = model.positional_arg(m, c, 0);
    if (a == py::kNone) a = model.keyword_arg(m, c, "device");
    return a != py::kNone && !py::string_literal_value(m.tree, a).starts_with("cpu");
  };
  auto fn_moves = [&](auto& self, const py::Function& f, int depth) -> bool {
    for (uint32_t ci : f.calls) {
      const py::Call& c = f.mod->calls[ci];
      if (moves(*f.mod, c)) return true;
      if (c.target && depth < 2 && self(self, *c.target, depth + 1)) return true;
    }
    return false;
  };
  auto value_moves = [&](auto& self, py::NodeId v, int depth) -> bool {
    const auto& t = ctx.tree;
    if (v == py::kNone || depth > 3) return false;
    if (t.is(v, py::K::Lambda)) {
      for (py::NodeId x = v; x < t[v].subtree_end; ++x)
        if (const py::Call* c = t.is(x, py::K::Call) ? ctx.mod.call_at(x) : nullptr)
          if (moves(ctx.mod, *c) || (c->target && fn_moves(fn_moves, *c->target, 1))) return true;
      return false;
    }
    if (t.is(v, py::K::Call)) {
      const py::Call* c = ctx.mod.call_at(v);
      if (!c || c->qname != "functools.partial") return false;
      return self(self, model.positional_arg(ctx.mod, *c, 0), depth + 1);
    }
    if (!t.is(v, py::K::Identifier)) return false;
    const py::Bindings* bs = model.bindings_of(ctx.mod, v);
    if (!bs || bs->empty()) return false;
    for (const py::Binding& b : *bs) {
      if (b.kind == py::Binding::Kind::Def && b.fn) {
        if (fn_moves(fn_moves, *b.fn, 0)) return true;
      } else if (b.kind == py::Binding::Kind::Assign && b.whole) {
        if (self(self, b.value, depth + 1)) return true;
      }
    }
    return false;
  };
  py::NodeId v = model.keyword_arg(ctx.mod, loader, "collate_fn");
  if (v == py::kNone) v = model.positional_arg(ctx.mod, loader, 6);
  return value_moves(value_moves, v, 0);
}

// docs/concepts.md "Messages follow the program's facts": a per-step message speaks of a waiting GPU
// only in a program that trains on an accelerator (the step loop's programs when known).
inline bool trains_on_accelerator(const RuleContext& ctx, const py::StepContext* sc = nullptr) {
  const py::Module& m = sc && sc->loop_mod ? *sc->loop_mod : ctx.mod;
  return ctx.model.programs_use_accelerator(m) || ctx.model.programs_use_accelerator(ctx.mod);
}

// Reports `node` when it runs every step; the message gets the step loop in its notes. Returns
// the finding (valid until the next report), or null when the node does not run every step.
// Work that is normal once an epoch (TL101-TL106, TL305) is not reported in a full-batch loop, where
// every step is an epoch (docs/concepts.md "Full-batch training").
inline Finding* report_if_per_step(RuleContext& ctx, py::NodeId node, const std::string& message) {
  if (auto sc = ctx.model.runs_every_step(ctx.mod, node, false)) return &ctx.report_per_step(node, message, *sc);
  return nullptr;
}
// The same, with the message for a program that trains on an accelerator and the one for a
// program that does not.
inline Finding* report_if_per_step(RuleContext& ctx, py::NodeId node, const std::string& accel_message,
                                   const std::string& host_message) {
  if (auto sc = ctx.model.runs_every_step(ctx.mod, node, false))
    return &ctx.report_per_step(node, trains_on_accelerator(ctx, &*sc) ? accel_message : host_message, *sc);
  return nullptr;
}

}  // namespace tl::rules
