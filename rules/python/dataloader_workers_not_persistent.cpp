// TL203 dataloader-workers-not-persistent: DataLoader with num_workers given (not known to be 0)
// and no persistent_workers=True, iterated inside an epoch loop (directly or via a call).
#include <functional>
#include <set>
#include <tuple>

#include "rules/python/common.h"
#include "rules/python/rules.h"

namespace tl::rules {
namespace {

// A binding of the loader: (module, function that binds it (null: module level), name), or
// for attributes (`self.train_loader`) (module, null, "attr:<name>").
using Key = std::tuple<const py::Module*, const py::Function*, std::string>;
using NameSet = std::set<Key>;

// The key an expression that reads a loader would have in module m.
Key key_of(const py::Module& m, py::NodeId e) {
  const py::Tree& t = m.tree;
  if (t.is(e, py::K::Attribute)) {
    std::string d = py::dotted_text(t, e);
    return {&m, nullptr, "attr:" + std::string(py::last_component(d))};
  }
  std::string name(t.text(e));
  // the function whose scope binds the name (Python's rules: local if assigned in it)
  for (const py::Function* f = m.enclosing_function(e); f; f = f->outer)
    if (f->scope.find_local(name)) return {&m, f, name};
  return {&m, nullptr, name};
}

// Is this call site run once per epoch (inside an epoch loop, or in a function an epoch loop calls)?
bool call_in_epoch(const py::ProgramModel& model, const py::Call& c) {
  for (const py::Loop* L = model.enclosing_loop(*c.mod, c.node); L;
       L = L->parent >= 0 ? &c.mod->loops[L->parent] : nullptr)
    if (L->kind == py::LoopKind::Epoch) return true;
  return c.fn && model.called_from_epoch_loop(c.fn);
}

bool call_lexically_in_epoch(const py::ProgramModel& model, const py::Call& c) {
  for (const py::Loop* L = model.enclosing_loop(*c.mod, c.node); L;
       L = L->parent >= 0 ? &c.mod->loops[L->parent] : nullptr)
    if (L->kind == py::LoopKind::Epoch) return true;
  return false;
}

// The names the loader ends up bound to: `x = DataLoader(...)`, `self.x = ...`, and through a
// factory `def build(): return DataLoader(...)` (or `loader = ...; return loader`, or a tuple of
// loaders) the names its callers bind the result to.
void bound_names(const RuleContext& ctx, const py::Module& m, py::NodeId value, NameSet& out, int depth = 0) {
  const py::Tree& t = m.tree;
  if (depth > 3) return;
  py::NodeId p = t.parent(value);
  int tuple_index = -1;
  if (p != py::kNone && (t.is(p, py::K::ExpressionList) || t.is(p, py::K::Tuple))) {
    int i = 0;
    for (py::NodeId el : t.named_child_range(p)) {
      if (el == value) tuple_index = i;
      ++i;
    }
    value = p;
    p = t.parent(p);
  }
  if (p == py::kNone) return;
  if (t.is(p, py::K::Assignment) && t.field(p, py::F::Right) == value) {
    py::NodeId left = t.field(p, py::F::Left);
    if (tuple_index >= 0 && left != py::kNone && (t.is(left, py::K::PatternList) || t.is(left, py::K::TuplePattern))) {
      auto els = t.named_children(left);
      if (tuple_index < static_cast<int>(els.size())) left = els[tuple_index];
      else return;
    }
    std::string d = py::dotted_text(t, left);
    if (d.empty()) return;
    out.insert(key_of(m, left));
    // `loader = DataLoader(...); return loader`
    if (const py::Function* f = m.enclosing_function(p); f && t.is(left, py::K::Identifier) && f->body != py::kNone) {
      std::vector<py::NodeId> stack{f->body};
      while (!stack.empty()) {
        py::NodeId x = stack.back();
        stack.pop_back();
        if (t.is(x, py::K::FunctionDefinition) || t.is(x, py::K::ClassDefinition) || t.is(x, py::K::Lambda)) continue;
        if (t.is(x, py::K::Identifier) && t.text(x) == t.text(left)) {
          py::NodeId xp = t.parent(x);
          if (xp != py::kNone && (t.is(xp, py::K::ReturnStatement) || t.is(t.parent(xp), py::K::ReturnStatement)))
            bound_names(ctx, m, x, out, depth + 1);
        }
        for (py::NodeId c = t.first_child(x); c != py::kNone; c = t.next_sibling(c))
          if (t[c].named) stack.push_back(c);
      }
    }
    return;
  }
  if (t.is(p, py::K::ReturnStatement)) {
    const py::Function* f = m.enclosing_function(p);
    if (!f) return;
    for (const py::Call* cc : ctx.model.callers_of(f)) {
      py::NodeId target = cc->node;
      if (tuple_index >= 0) {
        // the caller unpacks the returned tuple
        py::NodeId cp = cc->mod->tree.parent(cc->node);
        if (cp == py::kNone || !cc->mod->tree.is(cp, py::K::Assignment)) continue;
        py::NodeId left = cc->mod->tree.field(cp, py::F::Left);
        auto els = cc->mod->tree.named_children(left);
        if (tuple_index < static_cast<int>(els.size())) {
          std::string d = py::dotted_text(cc->mod->tree, els[tuple_index]);
          if (!d.empty()) out.insert(key_of(*cc->mod, els[tuple_index]));
        }
        continue;
      }
      bound_names(ctx, *cc->mod, target, out, depth + 1);
    }
  }
}

// The loader expression a for-loop iterates, through enumerate/tqdm/iter wrappers, also when
// the wrapper is bound to a name first (`pbar = tqdm(loader)`).
py::NodeId iterated_loader(const py::ProgramModel& model, const py::Module& m, py::NodeId e, int depth = 0) {
  const py::Tree& t = m.tree;
  if (e == py::kNone || depth > 4) return py::kNone;
  if (t.is(e, py::K::Identifier))
    if (auto* bs = model.bindings_of(m, e); bs && bs->size() == 1 && (*bs)[0].kind == py::Binding::Kind::Assign &&
                                            (*bs)[0].whole && t.is((*bs)[0].value, py::K::Call)) {
      const py::Call* c = m.call_at((*bs)[0].value);
      if (c && (c->qname == "builtins.enumerate" || c->qname == "builtins.iter" || c->qname.rfind("tqdm", 0) == 0))
        return iterated_loader(model, m, (*bs)[0].value, depth + 1);
    }
  if (t.is(e, py::K::Call)) {
    const py::Call* c = m.call_at(e);
    if (!c) return py::kNone;
    std::string_view q = c->qname;
    (void)q;
    py::NodeId args = t.field(e, py::F::Arguments);
    py::NodeId a0 = args != py::kNone ? t.first_named_child(args) : py::kNone;
    if (a0 != py::kNone && t.is(a0, py::K::KeywordArgument)) return py::kNone;
    return iterated_loader(model, m, a0, depth + 1);
  }
  if (t.is(e, py::K::Identifier) || t.is(e, py::K::Attribute)) return e;
  return py::kNone;
}

}  // namespace

void check_dataloader_workers_not_persistent(RuleContext& ctx) {
  for (auto& c : ctx.mod.calls) {
    if (!is_dataloader_ctor(c.qname)) continue;
    py::ValueSet w = ctx.model.keyword_values(ctx.mod, c, "num_workers", 5);
    if (w.maybe_absent) continue;  // a missing num_workers means 0 (TL201's business)
    bool zero = w.all([](const py::Literal& l) { return l.kind == py::Literal::Kind::Int && l.text == "0"; }, true);
    if (zero) continue;
    py::ValueSet pw = ctx.model.keyword_values(ctx.mod, c, "persistent_workers");
    bool persistent_true = false;
    for (auto& l : pw.values)
      if (pw.is_truthy_literal(l)) persistent_true = true;
    if (persistent_true || pw.unknown) continue;
    // a setting of its own in the configuration (`persistent_workers=args.persistent_workers`, a
    // `store_true` option off by default, `cfg.data.persistent_workers`): the authors offer the
    // choice and document its memory cost; the default is theirs to pick
    if (py::NodeId v = ctx.model.keyword_arg(ctx.mod, c, "persistent_workers");
        v != py::kNone && (ctx.tree.is(v, py::K::Attribute) || ctx.tree.is(v, py::K::Subscript)) &&
        py::icontains(ctx.tree.text(v), "persist"))
      continue;
    // built anew every epoch: persistent workers would not survive it anyway. One rebuilt only in
    // some epochs (a detector's loaders rebuilt once, when the backbone is unfrozen) is iterated
    // by the epochs that follow, each starting its workers again.
    if (call_in_epoch(ctx.model, c) &&
        (!call_lexically_in_epoch(ctx.model, c) || ctx.model.runs_every_epoch(ctx.mod, c.node)))
      continue;
    NameSet names;
    bound_names(ctx, ctx.mod, c.node, names);
    if (names.empty()) continue;
    // a loop over one of those names in an epoch context, or over a parameter that a call site
    // in an epoch context fills with one of them
    const py::Loop* hit = nullptr;
    const py::Module* hit_mod = nullptr;
    for (uint32_t pid : ctx.mod.programs)
      for (const py::Module* m : ctx.model.programs()[pid].members)
        for (auto& L : m->loops) {
          if (hit) break;
          if (!m->tree.is(L.node, py::K::ForStatement)) continue;
          py::NodeId it = iterated_loader(ctx.model, *m, m->tree.field(L.node, py::F::Right));
          if (it == py::kNone) continue;
          std::string d = py::dotted_text(m->tree, it);
          std::string last(py::last_component(d));
          bool epoch_loop_here = false;
          for (int32_t p = L.parent; p >= 0; p = m->loops[p].parent)
            if (m->loops[p].kind == py::LoopKind::Epoch) epoch_loop_here = true;
          // Epoch context is judged on this path only: the loop nested in an epoch loop, or a call on
          // the way from the loader's binding to the loop made inside one (lexically).
          // A global (or outer) loader read in a function that an epoch loop calls is iterated per
          // epoch too; one bound inside that function is rebuilt per call (skipped above).
          Key k = key_of(*m, it);
          // the loader itself, or a name that takes it as it is (`active = train_loader`, beside
          // `active = skip_first_batches(train_loader, n)` when resuming)
          bool named = names.count(k) > 0;
          if (!named && m->tree.is(it, py::K::Identifier))
            if (auto* bs = ctx.model.bindings_of(*m, it))
              for (auto& b : *bs)
                if (b.kind == py::Binding::Kind::Assign && b.whole && b.value != py::kNone &&
                    (m->tree.is(b.value, py::K::Identifier) || m->tree.is(b.value, py::K::Attribute)) &&
                    names.count(key_of(*m, b.value))) {
                  named = true;
                  k = key_of(*m, b.value);
                }
          bool matched = named &&
                         (epoch_loop_here || (std::get<1>(k) != L.fn && ctx.model.called_from_epoch_loop(L.fn)));
          // a parameter that callers fill with this very loader, possibly through their own
          // parameters (validate(val_loader) -> run_validate(loader)); some call on the way, or
          // the loop itself, must be in an epoch context
          if (!matched && L.fn && m->tree.is(it, py::K::Identifier)) {
            std::function<bool(const py::Function*, std::string_view, bool, int)> filled;
            filled = [&](const py::Function* f, std::string_view param, bool in_epoch, int depth) -> bool {
              if (depth > 4) return false;
              size_t pi = 0;
              while (pi < f->params.size() && f->params[pi] != param) ++pi;
              if (pi == f->params.size()) return false;
              for (const py::Call* cc : ctx.model.callers_of(f)) {
                bool epoch = in_epoch || call_lexically_in_epoch(ctx.model, *cc);
                py::NodeId arg = ctx.model.keyword_arg(*cc->mod, *cc, param);
                size_t offset = py::ProgramModel::implicit_args(*cc, *f);
                if (arg == py::kNone && pi >= offset) arg = ctx.model.positional_arg(*cc->mod, *cc, pi - offset);
                if (arg == py::kNone) continue;
                const py::Tree& ct = cc->mod->tree;
                if (!ct.is(arg, py::K::Identifier) && !ct.is(arg, py::K::Attribute)) continue;
                if (names.count(key_of(*cc->mod, arg))) {
                  if (epoch) return true;
                  continue;
                }
                if (ct.is(arg, py::K::Identifier) && cc->fn)
                  if (auto* bs = cc->fn->scope.find_local(ct.text(arg)); bs && bs->size() == 1 &&
                                                                         (*bs)[0].kind == py::Binding::Kind::Param)
                    if (filled(cc->fn, ct.text(arg), epoch, depth + 1)) return true;
              }
              return false;
            };
            matched = filled(L.fn, last, epoch_loop_here, 0);
          }
          if (matched) {
            hit = &L;
            hit_mod = m;
          }
        }
    if (!hit) continue;
    ctx.report(c.node,
               std::string("DataLoader with worker processes but without `persistent_workers=True`, iterated once per "
                           "epoch: every epoch shuts its workers down and starts new ones (re-importing, re-building "
                           "the dataset in each), ") +
                   (trains_on_accelerator(ctx) ? "while the GPU waits" : "before the epoch's first step can start"),
               {RuleContext::note_at(*hit_mod, hit->node, "iterated here, inside an epoch loop")});
  }
}

}  // namespace tl::rules
