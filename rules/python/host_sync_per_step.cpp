// TL105 host-sync-per-step: a call that blocks the host until the GPU finishes runs every step in
// a program training on an accelerator. One finding per statement.
#include <algorithm>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "rules/python/common.h"
#include "rules/python/rules.h"

namespace tl::rules {
namespace {

using py::TypeKind;

bool dtype_cast(const RuleContext& ctx, const py::Call& c) { return dtype_cast_in(ctx.model, ctx.mod, c); }

// Is the value already on the host? `x = y.cpu()` / `.numpy()` / `.tolist()` / `.item()`, a
// factory given no device, and what host-only arithmetic makes of such values: subscripts,
// reductions and dtype casts (`m.cpu().sum(dim=1).to(torch.long)`), comparisons and arithmetic
// with other host values or numbers, and the elements a loop takes from them (`for n in
// lengths_cpu:`, `for a, b in zip(a_cpu, b_cpu):`).
bool on_host(const RuleContext& ctx, py::NodeId e, int depth = 0) {
  const auto& t = ctx.tree;
  if (e == py::kNone || depth > 12) return false;
  if (t.is(e, py::K::Subscript) || t.is(e, py::K::ParenthesizedExpression))
    return on_host(ctx, t.is(e, py::K::Subscript) ? t.field(e, py::F::Value) : t.first_named_child(e), depth + 1);
  if (t.is(e, py::K::Integer) || t.is(e, py::K::Float) || t.is(e, py::K::True) || t.is(e, py::K::False)) return true;
  if (t.is(e, py::K::UnaryOperator)) return on_host(ctx, t.field(e, py::F::Argument), depth + 1);
  if (t.is(e, py::K::BinaryOperator) || t.is(e, py::K::ComparisonOperator)) {
    auto kids = t.named_children(e);
    if (kids.empty()) return false;
    bool any_value = false;
    for (py::NodeId k : kids) {
      if (!on_host(ctx, k, depth + 1)) return false;
      any_value |= !(t.is(k, py::K::Integer) || t.is(k, py::K::Float));
    }
    return any_value;
  }
  if (t.is(e, py::K::Call)) {
    const py::Call* c = ctx.mod.call_at(e);
    if (!c) return false;
    if (c->method == "cpu" || c->method == "numpy" || c->method == "tolist" || c->method == "item") return true;
    // made on the host: a factory with no `device=`, or `device="cpu"` (`torch.tensor(x)` and
    // `as_tensor` keep the device of a tensor `x`: only literal data counts for them)
    if (is_tensor_factory(c->qname)) {
      if (c->qname == "torch.tensor" || c->qname == "torch.as_tensor") {
        py::NodeId data = ctx.model.positional_arg(ctx.mod, *c, 0);
        if (data == py::kNone || !(t.is(data, py::K::Integer) || t.is(data, py::K::Float) ||
                                   t.is(data, py::K::List) || t.is(data, py::K::Tuple)))
          return false;
      }
      py::NodeId dev = ctx.model.keyword_arg(ctx.mod, *c, "device");
      return dev == py::kNone || py::string_literal_value(t, dev).starts_with("cpu");
    }
    if (c->receiver == py::kNone) return false;
    static const std::initializer_list<std::string_view> keeps = {
        "detach", "clone", "float", "long", "int", "bool", "half", "double", "squeeze", "unsqueeze", "view",
        "reshape", "flatten", "sum", "mean", "max", "min", "abs", "contiguous", "t"};
    if (std::find(keeps.begin(), keeps.end(), c->method) != keeps.end()) return on_host(ctx, c->receiver, depth + 1);
    if (dtype_cast(ctx, *c)) return on_host(ctx, c->receiver, depth + 1);
    return false;
  }
  if (!t.is(e, py::K::Identifier)) return false;
  // the assignment that reaches the read, where straight-line code decides it
  if (py::NodeId v = ctx.model.reaching(ctx.mod, e).value; v != py::kNone) return on_host(ctx, v, depth + 1);
  std::string_view name = t.text(e);
  const py::Function* f = ctx.mod.enclosing_function(e);
  const py::Scope* s = f ? &f->scope : &ctx.mod.scope;
  auto* bs = s->find_local(name);
  if (!bs || bs->empty()) return false;
  // what a loop takes from host values: their elements, also through zip() and enumerate()
  auto host_iterable = [&](py::NodeId it) {
    if (on_host(ctx, it, depth + 1)) return true;
    const py::Call* c = t.is(it, py::K::Call) ? ctx.mod.call_at(it) : nullptr;
    if (!c || (c->qname != "builtins.zip" && c->qname != "builtins.enumerate")) return false;
    py::NodeId args = t.field(it, py::F::Arguments);
    if (args == py::kNone) return false;
    auto kids = t.named_children(args);
    if (kids.empty()) return false;
    if (c->qname == "builtins.enumerate") return on_host(ctx, kids[0], depth + 1);
    for (py::NodeId k : kids)
      if (t.is(k, py::K::KeywordArgument)) continue;  // strict=True
      else if (!on_host(ctx, k, depth + 1)) return false;
    return true;
  };
  for (auto& b : *bs) {
    if (b.kind == py::Binding::Kind::ForTarget) {
      if (!host_iterable(b.value)) return false;
      continue;
    }
    if (b.kind != py::Binding::Kind::Assign || !b.whole || !on_host(ctx, b.value, depth + 1)) return false;
  }
  return true;
}

bool numpy_like(const RuleContext& ctx, py::NodeId recv) {
  if (on_host(ctx, recv)) return true;
  py::TypeKind k = ctx.model.type_of(ctx.mod, recv);
  if (k == TypeKind::NumpyArray || k == TypeKind::Number) return true;
  for (auto& o : ctx.model.origins(ctx.mod, recv))
    if (o.rfind("numpy.", 0) == 0 || o == "builtins.float" || o == "builtins.int" || o == "builtins.len" ||
        o == "builtins.round" || o == "builtins.bool" || o == "builtins.str")
      return true;
  return false;
}

// A value that formatting would read from the device: known to be a tensor, not already on the host.
bool formats_tensor(const RuleContext& ctx, py::NodeId v) {
  return v != py::kNone && ctx.model.type_of(ctx.mod, v) == TypeKind::Tensor && !on_host(ctx, v);
}

// A string built from a tensor: an f-string interpolating one (`f"{loss:.4f}"`) or `%`-formatting
// with one (`"%.3f" % loss`, `"%d %.3f" % (step, loss)`). Returns the interpolated expression.
py::NodeId formatted_tensor(const RuleContext& ctx, py::NodeId n) {
  const auto& t = ctx.tree;
  if (t.is(n, py::K::String)) {
    for (py::NodeId ch = t.first_child(n); ch != py::kNone; ch = t.next_sibling(ch)) {
      if (t.type_name(ch) != "interpolation") continue;
      py::NodeId e = t.first_named_child(ch);
      if (formats_tensor(ctx, e)) return e;
    }
    return py::kNone;
  }
  if (t.is(n, py::K::BinaryOperator) && t.operator_text(n) == "%") {
    py::NodeId l = t.field(n, py::F::Left), r = t.field(n, py::F::Right);
    if (l == py::kNone || !(t.is(l, py::K::String) || t.is(l, py::K::ConcatenatedString))) return py::kNone;
    if (r != py::kNone && (t.is(r, py::K::Tuple) || t.is(r, py::K::ParenthesizedExpression))) {
      for (py::NodeId e : t.named_child_range(r))
        if (formats_tensor(ctx, e)) return e;
      return py::kNone;
    }
    return formats_tensor(ctx, r) ? r : py::kNone;
  }
  return py::kNone;
}

// What makes this call a host sync, or empty.
std::string sync_of(const RuleContext& ctx, const py::Call& c) {
  const auto& t = ctx.tree;
  if (c.qname == "torch.cuda.synchronize" || c.qname == "torch.cuda.current_stream") return c.qname == "torch.cuda.synchronize" ? "torch.cuda.synchronize()" : "";
  if (c.receiver != py::kNone && !c.method.empty()) {
    // "{:.3f}".format(loss): formatting a tensor reads its value
    if (c.method == "format" && (t.is(c.receiver, py::K::String) || t.is(c.receiver, py::K::ConcatenatedString))) {
      py::NodeId args = t.field(c.node, py::F::Arguments);
      if (args != py::kNone)
        for (py::NodeId a : t.named_child_range(args)) {
          py::NodeId v = t.is(a, py::K::KeywordArgument) ? t.field(a, py::F::Value) : a;
          if (formats_tensor(ctx, v)) return "str.format(<tensor>)";
        }
      return "";
    }
    if (c.method == "item" && ctx.model.positional_count(ctx.mod, c) == 0 && !numpy_like(ctx, c.receiver)) return ".item()";
    if ((c.method == "cpu" || c.method == "numpy" || c.method == "tolist") && ctx.model.positional_count(ctx.mod, c) == 0) {
      if (numpy_like(ctx, c.receiver)) return "";
      TypeKind k = ctx.model.type_of(ctx.mod, c.receiver);
      if (k == TypeKind::Module) return "";
      // `vae.cpu()` as a statement: only a module moves in place (a tensor's copy would be
      // dropped, which is TL401's bug), so an unknown receiver there is a module being offloaded
      if (py::NodeId st = t.parent(c.node);
          k != TypeKind::Tensor && st != py::kNone && t.is(st, py::K::ExpressionStatement))
        return "";
      if (c.method == "cpu" || k == TypeKind::Tensor) return "." + std::string(c.method) + "()";
      // .numpy()/.tolist() on something unknown: only after .cpu()/.detach() chains on tensors
      return "";
    }
    return "";
  }
  if (c.qname == "builtins.print" || c.qname == "builtins.float" || c.qname == "builtins.int" || c.qname == "builtins.bool") {
    py::NodeId args = t.field(c.node, py::F::Arguments);
    if (args == py::kNone) return "";
    for (py::NodeId a : t.named_child_range(args)) {
      if (t.is(a, py::K::KeywordArgument)) continue;
      if (ctx.model.type_of(ctx.mod, a) == TypeKind::Tensor && !on_host(ctx, a))
        return std::string(py::last_component(c.qname)) + "(<tensor>)";
      // print(f"... {loss} ...")
      if (c.qname == "builtins.print" && t.is(a, py::K::String)) {
        std::vector<py::NodeId> stack{a};
        while (!stack.empty()) {
          py::NodeId x = stack.back();
          stack.pop_back();
          if (t.type_name(x) == "interpolation") {
            py::NodeId e = t.first_named_child(x);
            if (e != py::kNone && ctx.model.type_of(ctx.mod, e) == TypeKind::Tensor) return "print(<tensor>)";
            continue;
          }
          for (py::NodeId ch = t.first_child(x); ch != py::kNone; ch = t.next_sibling(ch))
            if (t[ch].named) stack.push_back(ch);
        }
      }
    }
  }
  return "";
}

// An evaluation loop that collects its outputs on the host: `preds.append(out.cpu())`,
// `labels.extend(y.cpu().numpy().tolist())`, `scores += s.tolist()` (not `top1 += int(...)`).
// The values must reach the host for the metric computed after the loop (or are kept there to
// bound GPU memory), so the copy is the loop's product, not a read that could be made every N
// steps. Scalar reads (`.item()`) that feed running meters are still reported, and so is any
// copy in a training step.
bool collects_output(const RuleContext& ctx, const py::Call& c, const py::StepContext& sc) {
  const auto& t = ctx.tree;
  if (sc.kind != py::LoopKind::EvalStep || c.receiver == py::kNone ||
      !(c.method == "cpu" || c.method == "numpy" || c.method == "tolist"))
    return false;
  // climb the method chain the sync sits in: out.cpu() -> out.cpu().numpy() -> ... .tolist()
  py::NodeId e = c.node;
  for (int depth = 0; depth < 8; ++depth) {
    py::NodeId p = t.parent(e);
    if (p == py::kNone || !t.is(p, py::K::Attribute)) break;
    py::NodeId call = t.parent(p);
    if (call == py::kNone || !t.is(call, py::K::Call)) break;
    const py::Call* m = ctx.mod.call_at(call);
    if (!m || !(m->method == "numpy" || m->method == "tolist" || m->method == "cpu" || m->method == "detach" ||
                m->method == "float" || m->method == "flatten" || m->method == "view" || m->method == "reshape"))
      break;
    e = call;
  }
  py::NodeId p = t.parent(e);
  if (p == py::kNone) return false;
  // returned to the caller, alone or in a dict, tuple or list: an evaluation hook's outputs
  // (`return {"preds": logits.detach().cpu().numpy(), ...}` from a `validation_step`), gathered
  // by the framework for the epoch's metric
  for (py::NodeId r = p; r != py::kNone; r = t.parent(r)) {
    if (t.is(r, py::K::ReturnStatement)) return true;
    if (!(t.is(r, py::K::Pair) || t.is(r, py::K::Dictionary) || t.is(r, py::K::Tuple) || t.is(r, py::K::List) ||
          t.is(r, py::K::ExpressionList) || t.is(r, py::K::ParenthesizedExpression)))
      break;
  }
  if (t.is(p, py::K::AugmentedAssignment)) {  // a list grown by a list: `scores += s.tolist()`
    const py::Call* last = ctx.mod.call_at(e);
    return t.field(p, py::F::Right) == e && t.operator_text(p) == "+=" && last && last->method == "tolist";
  }
  if (!t.is(p, py::K::ArgumentList) || t.named_children(p).size() != 1) return false;
  const py::Call* into = ctx.mod.call_at(t.parent(p));
  return into && into->receiver != py::kNone && (into->method == "append" || into->method == "extend");
}

// Where a copy to the host goes, in module `m`: to a host consumer (an argument of a call that is
// neither a `torch` function nor a scalar conversion: `preds.append(...)`, `np.append(preds, ...)`,
// `tokenizer.batch_decode(...)`, `np.save(...)`), out of a function (`return t.cpu().tolist()`, a
// helper handing its caller lists), into a list grown with `+=`, or into a name bound before the
// loop (an accumulator: `preds = logits.cpu().numpy()` under `if preds is None:`). A copy kept
// for arithmetic in the iteration (`correct = (pred == y).cpu()`) is not the loop's output.
bool output_use(const py::ProgramModel& model, const py::Module& m, const py::Call& c, const py::Module* loop_mod,
                py::NodeId loop_node) {
  const auto& t = m.tree;
  py::NodeId e = c.node;
  for (int depth = 0; depth < 8; ++depth) {  // the method chain: .cpu().numpy().tolist()
    py::NodeId p = t.parent(e);
    if (p == py::kNone || !t.is(p, py::K::Attribute)) break;
    py::NodeId call = t.parent(p);
    if (call == py::kNone || !t.is(call, py::K::Call)) break;
    const py::Call* k = m.call_at(call);
    if (!k || !(k->method == "numpy" || k->method == "tolist" || k->method == "cpu" || k->method == "detach" ||
                k->method == "float" || k->method == "flatten" || k->method == "view" || k->method == "reshape" ||
                k->method == "astype"))
      break;
    e = call;
  }
  py::NodeId p = t.parent(e);
  while (p != py::kNone && (t.is(p, py::K::List) || t.is(p, py::K::Tuple) || t.is(p, py::K::Dictionary) ||
                            t.is(p, py::K::Pair) || t.is(p, py::K::ParenthesizedExpression) ||
                            t.is(p, py::K::ExpressionList) || t.is(p, py::K::KeywordArgument))) {
    e = p;
    p = t.parent(p);
  }
  if (p == py::kNone) return false;
  if (t.is(p, py::K::ReturnStatement)) return true;
  if (t.is(p, py::K::AugmentedAssignment)) {  // a list grown by a list: `scores += s.tolist()`
    const py::Call* last = m.call_at(e);
    return t.field(p, py::F::Right) == e && last && last->method == "tolist";
  }
  if (t.is(p, py::K::ArgumentList)) {
    const py::Call* k = m.call_at(t.parent(p));
    if (!k) return false;
    std::string_view q = k->qname;
    return !q.starts_with("torch.") && !qname_in(q, {"builtins.int", "builtins.float", "builtins.bool",
                                                      "builtins.len", "builtins.round", "builtins.sum",
                                                      "builtins.max", "builtins.min", "builtins.abs"});
  }
  // an accumulator: only in the loop's own function (a helper's locals are no accumulator of the
  // loop), bound before the loop
  if (t.is(p, py::K::Assignment) && t.field(p, py::F::Right) == e && &m == loop_mod && loop_node != py::kNone &&
      c.node > loop_node && c.node < t[loop_node].subtree_end) {
    py::NodeId left = t.field(p, py::F::Left);
    if (left == py::kNone || !t.is(left, py::K::Identifier)) return false;
    const py::Bindings* bs = model.bindings_of(m, left);
    if (!bs) return false;
    const py::Function* loop_fn = m.enclosing_function(loop_node);
    for (const py::Binding& b : *bs)
      if (b.stmt != py::kNone && b.stmt < loop_node && m.enclosing_function(b.stmt) == loop_fn) return true;
  }
  return false;
}

// An evaluation loop that copies tensors to the host every iteration (`preds.append(out.cpu())`,
// `np.append(preds, logits.detach().cpu().numpy(), axis=0)`, `to_list(start_logits[i])` for a
// post-processing done in Python), in the loop or in a function it calls: the loop waits for the
// device once a batch by design, and a scalar read in the same iteration (`eval_loss +=
// loss.mean().item()`) only moves that wait earlier. None of its reads is reported; an
// evaluation loop whose only reads are scalars for running meters still is.
bool copies_outputs_every_step(const RuleContext& ctx, const py::StepContext& sc) {
  if (sc.kind != py::LoopKind::EvalStep || !sc.loop_mod || sc.loop_node == py::kNone) return false;
  const py::Module& lm = *sc.loop_mod;
  const auto& lt = lm.tree;
  // a copy of a tensor to the host (not of a scalar: `loss.detach().cpu().item()` is a read)
  auto copies = [&](const py::Module& m, const py::Call& c) {
    if (c.receiver == py::kNone || !(c.method == "cpu" || c.method == "numpy" || c.method == "tolist") ||
        ctx.model.positional_count(m, c) != 0)
      return false;
    if (py::NodeId up = m.tree.parent(c.node); up != py::kNone && m.tree.is(up, py::K::Attribute))
      if (py::NodeId name = m.tree.field(up, py::F::Attribute); name != py::kNone && m.tree.text(name) == "item")
        return false;
    if (&m == &ctx.mod) return !sync_of(ctx, c).empty();
    return ctx.model.type_of(m, c.receiver) == TypeKind::Tensor;
  };
  // such a copy whose value is the loop's output (output_use)
  auto transfer = [&](const py::Module& m, const py::Call& c) {
    return copies(m, c) && output_use(ctx.model, m, c, &lm, sc.loop_node);
  };
  const py::Loop* L = ctx.model.loop_of(lm, sc.loop_node);
  if (!L) {
    // an evaluation hook (`validation_step`) that returns its outputs on the host, directly or
    // through a name (`preds = logits.cpu().numpy()` ... `return {"pred": preds}`)
    if (!lt.is(sc.loop_node, py::K::FunctionDefinition)) return false;
    const py::Function* hook = lm.function_of_def(sc.loop_node);
    if (!hook || hook->body == py::kNone) return false;
    std::vector<py::NodeId> returns;
    for (py::NodeId n = hook->body; n < lt[hook->body].subtree_end; ++n)
      if (lt.is(n, py::K::ReturnStatement) && lm.enclosing_function(n) == hook) returns.push_back(n);
    auto returned = [&](std::string_view name) {
      for (py::NodeId r : returns)
        for (py::NodeId x = r; x < lt[r].subtree_end; ++x)
          if (lt.is(x, py::K::Identifier) && lt.text(x) == name) return true;
      return false;
    };
    for (uint32_t ci : hook->calls) {
      const py::Call& c = lm.calls[ci];
      if (!copies(lm, c)) continue;
      py::NodeId st = py::ProgramModel::statement_of(lt, c.node);
      if (lt.is(st, py::K::ReturnStatement) && output_use(ctx.model, lm, c, &lm, sc.loop_node)) return true;
      py::NodeId a = lt.is(st, py::K::ExpressionStatement) ? lt.first_named_child(st) : py::kNone;
      if (a != py::kNone && lt.is(a, py::K::Assignment)) {
        py::NodeId left = lt.field(a, py::F::Left);
        if (left != py::kNone && lt.is(left, py::K::Identifier) && returned(lt.text(left))) return true;
      }
    }
    return false;
  }
  // no condition between `n` and `top`, which holds it: no `if`, `elif`, `else`, ternary, `and`/`or`
  // or `except` (nested loops, `with` and `try` bodies are fine), so that `n` runs whenever `top` does
  auto direct_in = [&](py::NodeId n, py::NodeId top) {
    for (py::NodeId x = lt.parent(n); x != py::kNone && x != top; x = lt.parent(x))
      if (lt.is(x, py::K::IfStatement) || lt.is(x, py::K::ElifClause) || lt.is(x, py::K::ElseClause) ||
          lt.is(x, py::K::ConditionalExpression) || lt.is(x, py::K::BooleanOperator) || lt.is(x, py::K::ExceptClause))
        return false;
    return true;
  };
  // on every path through the loop's body, so that it runs whenever any read of the iteration does
  auto unconditional = [&](py::NodeId n) { return direct_in(n, sc.loop_node); };
  // both branches of an `if` that runs every step copy (`if preds is None: preds = x.cpu().numpy()
  // else: preds = np.append(preds, x.cpu().numpy(), axis=0)`)
  auto in_every_branch = [&](const py::Call& c) {
    py::NodeId ifs = py::kNone, branch = py::kNone;
    for (py::NodeId x = c.node; x != py::kNone && x != sc.loop_node; x = lt.parent(x)) {
      py::NodeId up = lt.parent(x);
      if (up != py::kNone && (lt.is(up, py::K::IfStatement) || lt.is(up, py::K::ElseClause)) && lt.is(x, py::K::Block)) {
        ifs = lt.is(up, py::K::ElseClause) ? lt.parent(up) : up;
        branch = x;
        break;
      }
    }
    if (branch == py::kNone || !direct_in(c.node, branch)) return false;
    if (ifs == py::kNone || !lt.is(ifs, py::K::IfStatement)) return false;
    std::vector<py::NodeId> blocks{lt.field(ifs, py::F::Consequence)};
    for (py::NodeId k : lt.named_child_range(ifs)) {
      if (lt.is(k, py::K::ElifClause)) return false;
      if (lt.is(k, py::K::ElseClause))
        for (py::NodeId b : lt.named_child_range(k))
          if (lt.is(b, py::K::Block)) blocks.push_back(b);
    }
    if (blocks.size() != 2 || blocks[0] == py::kNone) return false;
    py::NodeId other = blocks[0] == branch ? blocks[1] : blocks[0];
    bool other_copies = false;
    for (uint32_t ci : L->calls) {
      const py::Call& o = lm.calls[ci];
      if (o.node > other && o.node < lt[other].subtree_end && direct_in(o.node, other) && transfer(lm, o))
        other_copies = true;
    }
    return other_copies && unconditional(ifs) && ctx.model.runs_every_step_of(lm, ifs, lm, sc.loop_node);
  };
  for (uint32_t ci : L->calls) {
    const py::Call& c = lm.calls[ci];
    if (transfer(lm, c) &&
        ((unconditional(c.node) && ctx.model.runs_every_step_of(lm, c.node, lm, sc.loop_node)) || in_every_branch(c)))
      return true;
    if (c.target && unconditional(c.node))
      for (uint32_t gi : c.target->calls) {
        const py::Call& g = c.target->mod->calls[gi];
        if (transfer(*c.target->mod, g) && ctx.model.runs_every_step_of(*c.target->mod, g.node, lm, sc.loop_node))
          return true;
      }
  }
  return false;
}

// Does every iteration of the step call `.generate(...)` (a language model's decoding loop), or
// a diffusers pipeline for its images, in the loop or in a function it calls? Decoding already
// waits for the device once per generated token (the stopping test reads the sequences), and a
// pipeline hands back host images, so a read of its output, or of anything else, in the same
// iteration adds no wait of its own.
bool decodes_every_step(const RuleContext& ctx, const py::StepContext& sc) {
  if (!sc.loop_mod || sc.loop_node == py::kNone) return false;
  const py::Module& lm = *sc.loop_mod;
  const py::Loop* L = ctx.model.loop_of(lm, sc.loop_node);
  if (!L) return false;
  // `.generate(...)`, or a diffusers pipeline called for its images (`pipe(prompt).images`): its
  // output comes back as PIL images, copied to the host after the last denoising step
  auto generates = [&](const py::Module& gm, const py::Call& c) {
    if (c.receiver != py::kNone && c.method == "generate") return true;
    if (c.callee == py::kNone || c.receiver != py::kNone) return false;
    const auto& t = gm.tree;
    py::NodeId up = t.parent(c.node);
    if (up == py::kNone || !t.is(up, py::K::Attribute) || t.text(t.field(up, py::F::Attribute)) != "images") return false;
    if (py::NodeId ot = ctx.model.keyword_arg(gm, c, "output_type"); ot != py::kNone) {
      std::string v = py::string_literal_value(t, ot);
      if (v != "pil" && v != "np") return false;
    }
    // made by diffusers (`DiffusionPipeline.from_pretrained(...)`), or, inside diffusers' own
    // tree, an instance of one of its pipeline classes
    for (auto& o : ctx.model.origins(gm, c.callee))
      if (o.starts_with("diffusers.") || (o.starts_with("class:") && o.ends_with("Pipeline"))) return true;
    // a name every assignment of which makes a pipeline
    auto makes_pipeline = [&](py::NodeId v) {
      if (v == py::kNone || !t.is(v, py::K::Call)) return false;
      const py::Call* made = gm.call_at(v);
      if (!made || made->callee == py::kNone) return false;
      std::string d = py::dotted_text(t, made->callee);
      return made->qname.starts_with("diffusers.") || d.ends_with("Pipeline.from_pretrained") ||
             d.ends_with("Pipeline.from_single_file");
    };
    if (t.is(c.callee, py::K::Identifier))
      if (auto* bs = ctx.model.bindings_of(gm, c.callee); bs && !bs->empty()) {
        bool all = true;
        for (auto& b : *bs) all = all && b.kind == py::Binding::Kind::Assign && b.whole && makes_pipeline(b.value);
        if (all) return true;
      }
    return false;
  };
  for (uint32_t ci : L->calls) {
    const py::Call& c = lm.calls[ci];
    bool here = generates(lm, c);
    if (!here && c.target)
      for (uint32_t fi : c.target->calls) {
        const py::Call& g = c.target->mod->calls[fi];
        if (generates(*c.target->mod, g) && ctx.model.runs_every_step_of(*c.target->mod, g.node, lm, sc.loop_node))
          here = true;
      }
    if (here && ctx.model.runs_every_step_of(lm, c.node, lm, sc.loop_node)) return true;
  }
  return false;
}

using LightMemo = std::unordered_map<const void*, bool>;
bool light_call(const py::ProgramModel& model, const py::Module& m, const py::Call& c, int depth, LightMemo& memo);

// A function of the program that queues little or nothing on the GPU: every call it makes is
// light (a running meter's `add`, a progress bar's update, a dict of floats built for a logger),
// a few calls deep. One that steps, runs backward or holds a step loop is not.
bool light_function(const py::ProgramModel& model, const py::Function& f, int depth, LightMemo& memo) {
  if (depth > 3 || f.reaches_backward || f.reaches_opt_step || f.reaches_step_loop) return false;
  if (auto it = memo.find(&f); it != memo.end()) return it->second;
  memo[&f] = false;  // a recursive call is not light
  bool light = true;
  for (uint32_t ci : f.calls)
    if (!light_call(model, *f.mod, f.mod->calls[ci], depth + 1, memo)) {
      light = false;
      break;
    }
  return memo[&f] = light;
}

// A plain class of the program (no base but `object` or other such classes) whose `__init__` is
// light: building it queues nothing (`AverageMeter()`), unlike building a model.
bool light_class(const py::ProgramModel& model, const py::Class& k, int depth, LightMemo& memo) {
  if (depth > 3) return false;
  if (auto it = memo.find(&k); it != memo.end()) return it->second;
  memo[&k] = false;
  bool light = k.local_bases.size() == k.bases.size();
  for (const std::string& b : k.bases) light = light || b == "builtins.object";
  for (const py::Class* b : k.local_bases) light = light && light_class(model, *b, depth + 1, memo);
  if (light)
    if (auto it = k.methods.find("__init__"); it != k.methods.end())
      light = light_function(model, *it->second, depth + 1, memo);
  return memo[&k] = light;
}

// Does a call queue little on the GPU: Python's builtins, methods of host containers and
// strings, tensor methods and `torch.*` functions (`.mean()`, `.argmax(1)`, `torch.stack(...)`,
// a metrics gather) whose kernels are small next to a step's, and the program's own light
// functions and plain classes? Not a model or a loss called by name, a backward or optimizer step,
// a functional layer, a copy to the device.
bool light_call(const py::ProgramModel& model, const py::Module& m, const py::Call& c, int depth, LightMemo& memo) {
  if (c.target) return light_function(model, *c.target, depth, memo);
  if (c.target_class) return light_class(model, *c.target_class, depth, memo);
  std::string_view q = c.qname;
  if (q.starts_with("builtins.")) return true;
  if (q.starts_with("torch.distributed.")) {  // the process group's queries, not a collective
    std::string_view f = py::last_component(q);
    return f == "get_rank" || f == "get_world_size" || f == "is_initialized" || f == "is_available" ||
           f == "get_backend" || f == "get_local_rank";
  }
  if (q.starts_with("torch.nn") || q.starts_with("torch.autograd") || q.starts_with("torch.distributed")) return false;
  if (q.starts_with("torch.")) return true;
  if (c.receiver == py::kNone) return false;  // a call of a name: a model, a loss, a helper
  return !(c.method == "backward" || c.method == "step" || c.method == "forward" || c.method == "generate" ||
           c.method == "zero_grad" || c.method == "cuda" || (c.method == "to" && !dtype_cast_in(model, m, c)));
}

// Does `stmt` queue little or nothing on the GPU: no function defined in it, and only light calls
// (light_call), also in a loop it holds (`for k, v in metrics.items(): logs[k] = v.item()`)?
bool light_statement(const RuleContext& ctx, py::NodeId stmt, LightMemo& memo) {
  const auto& t = ctx.tree;
  for (py::NodeId n = stmt, end = t[stmt].subtree_end; n < end; ++n) {
    if (t.is(n, py::K::Lambda) || t.is(n, py::K::FunctionDefinition) || t.is(n, py::K::ClassDefinition))
      return false;
    if (!t.is(n, py::K::Call)) continue;
    const py::Call* c = ctx.mod.call_at(n);
    if (!c || !light_call(ctx.model, ctx.mod, *c, 0, memo)) return false;
  }
  return true;
}

struct SyncSite {
  py::NodeId node = py::kNone, stmt = py::kNone;
  std::string message;
  py::StepContext sc;
};

}  // namespace

// Reads one after another in a step (`a = gather(x).mean().item()`, then `b =
// gather(y).mean().item()`): the first waits for the step's queued work; a later one, with only
// light work between them in the same block (other reads, metric arithmetic, host bookkeeping),
// waits for a few small kernels. The first is reported and the others are its notes: one finding
// for the step's reads, whose fix (read them every N steps, or stack them and read once) is one
// change. A read after heavy work (a forward, a backward, a call of the program's code) is a
// finding of its own.
void check_host_sync_per_step(RuleContext& ctx) {
  if (!ctx.model.programs_use_accelerator(ctx.mod)) return;
  if (!ctx.model.has_step_code(ctx.mod)) return;  // every report below asks runs_every_step
  const auto& t = ctx.tree;
  std::unordered_set<py::NodeId> reported_statements;
  std::vector<SyncSite> sites;
  // per evaluation loop (copies_outputs_every_step), asked once
  std::unordered_map<const void*, bool> outputs_memo;
  auto copies_outputs = [&](const py::StepContext& sc) {
    if (sc.kind != py::LoopKind::EvalStep) return false;
    if (!sc.loop_mod || sc.loop_node == py::kNone) return false;
    const void* key = &sc.loop_mod->tree[sc.loop_node];  // the loop, or the hook's definition
    auto it = outputs_memo.find(key);
    if (it == outputs_memo.end()) it = outputs_memo.emplace(key, copies_outputs_every_step(ctx, sc)).first;
    return it->second;
  };
  // calls in source order: the first flagged call of a statement wins
  for (auto& c : ctx.mod.calls) {
    std::string what = sync_of(ctx, c);
    if (what.empty()) continue;
    py::NodeId stmt = py::ProgramModel::statement_of(t, c.node);
    if (reported_statements.count(stmt)) continue;
    auto sc = ctx.model.runs_every_step(ctx.mod, c.node, false);
    if (!sc || collects_output(ctx, c, *sc) || decodes_every_step(ctx, *sc) || copies_outputs(*sc)) continue;
    reported_statements.insert(stmt);
    sites.push_back({c.node, stmt,
                     "`" + what + "` blocks the host until the GPU has finished every queued kernel, every step: "
                     "the CPU cannot queue the next step's work while it waits; read values every N steps",
                     *sc});
  }
  // `if <tensor>:` conditions, also of a ternary `a if <tensor> else b`
  for (py::NodeId n = 0; n < t.size(); ++n) {
    py::NodeId cond = py::kNone;
    if (t.is(n, py::K::IfStatement) || t.is(n, py::K::ElifClause)) cond = t.field(n, py::F::Condition);
    else if (t.is(n, py::K::ConditionalExpression)) {
      auto kids = t.named_children(n);
      if (kids.size() == 3) cond = kids[1];
    }
    if (cond == py::kNone || ctx.model.type_of(ctx.mod, cond) != TypeKind::Tensor) continue;
    py::NodeId stmt = py::ProgramModel::statement_of(t, cond);
    if (reported_statements.count(stmt)) continue;
    auto sc = ctx.model.runs_every_step(ctx.mod, cond, false);
    if (!sc || decodes_every_step(ctx, *sc) || copies_outputs(*sc)) continue;
    reported_statements.insert(stmt);
    sites.push_back({cond, stmt,
                     "`if <tensor>:` converts a tensor to a Python bool every step, which waits for the GPU to "
                     "finish; keep the check on the device or do it every N steps",
                     *sc});
  }
  // a tensor formatted into a string: f"{loss:.4f}", "%.3f" % loss
  for (py::NodeId n = 0; n < t.size(); ++n) {
    if (!t.is(n, py::K::String) && !t.is(n, py::K::BinaryOperator)) continue;
    py::NodeId e = formatted_tensor(ctx, n);
    if (e == py::kNone) continue;
    py::NodeId stmt = py::ProgramModel::statement_of(t, n);
    if (reported_statements.count(stmt)) continue;
    // an assert's message and a raised error's text are built only when they fail
    if (t.is(stmt, py::K::AssertStatement) || t.is(stmt, py::K::RaiseStatement)) continue;
    auto sc = ctx.model.runs_every_step(ctx.mod, n, false);
    if (!sc || decodes_every_step(ctx, *sc) || copies_outputs(*sc)) continue;
    reported_statements.insert(stmt);
    sites.push_back({n, stmt,
                     "formatting the tensor `" + std::string(t.text(e)) +
                         "` into a string copies its value to the host, which waits for the GPU to finish every "
                         "queued kernel, every step; format a `.item()` read every N steps",
                     *sc});
  }
  std::sort(sites.begin(), sites.end(),
            [&](const SyncSite& a, const SyncSite& b) { return t[a.stmt].start < t[b.stmt].start; });
  std::unordered_map<py::NodeId, size_t> site_of_stmt;
  for (size_t i = 0; i < sites.size(); ++i) site_of_stmt.emplace(sites[i].stmt, i);
  // each site's group leader: walking back through its block, an earlier read with only light
  // statements between (and itself light: its statement queues nothing heavy after the read)
  std::vector<size_t> leader(sites.size());
  std::vector<std::vector<size_t>> followers(sites.size());
  std::unordered_map<py::NodeId, bool> light;
  LightMemo memo;
  auto is_light = [&](py::NodeId st) {
    auto it = light.find(st);
    if (it == light.end()) it = light.emplace(st, light_statement(ctx, st, memo)).first;
    return it->second;
  };
  // the latest site at `p` or inside it (a light `if` holding a read)
  auto last_site_in = [&](py::NodeId p) -> std::optional<size_t> {
    if (auto it = site_of_stmt.find(p); it != site_of_stmt.end()) return it->second;
    std::optional<size_t> last;
    for (size_t k = 0; k < sites.size(); ++k)
      if (sites[k].stmt > p && sites[k].stmt < t[p].subtree_end) last = k;
    return last;
  };
  // the `if` statement whose block (or `elif`/`else` block) `block` is, when all its conditions
  // are light, or the loop whose body it is, when the whole loop is light; kNone
  // otherwise (a `with`, a `try`: not climbed out of)
  auto light_if_of = [&](py::NodeId block) -> py::NodeId {
    py::NodeId owner = t.parent(block);
    if (owner == py::kNone) return py::kNone;
    if ((t.is(owner, py::K::ForStatement) || t.is(owner, py::K::WhileStatement)) && t.field(owner, py::F::Body) == block) {
      // the whole loop light: from its second iteration on, what runs before the read is the end
      // of the previous iteration's body
      return is_light(owner) ? owner : py::kNone;
    }
    py::NodeId ifs = t.is(owner, py::K::IfStatement) ? owner
                     : (t.is(owner, py::K::ElseClause) || t.is(owner, py::K::ElifClause)) ? t.parent(owner)
                                                                                            : py::kNone;
    if (ifs == py::kNone || !t.is(ifs, py::K::IfStatement)) return py::kNone;
    if (!light_statement(ctx, t.field(ifs, py::F::Condition), memo)) return py::kNone;
    for (py::NodeId k : t.named_child_range(ifs))
      if (t.is(k, py::K::ElifClause) && !light_statement(ctx, t.field(k, py::F::Condition), memo)) return py::kNone;
    return ifs;
  };
  std::vector<char> dropped(sites.size(), 0);
  // A function of the program that reads a value back in a statement of its own body (not one
  // nested in a branch): `return correct.sum().item() * 100 / n` at the end of an accuracy helper.
  auto function_reads = [&](const py::Function& f) {
    const auto& ft = f.mod->tree;
    for (uint32_t ci : f.calls) {
      const py::Call& c = f.mod->calls[ci];
      bool read = c.qname == "torch.cuda.synchronize" ||
                  (c.receiver != py::kNone && (c.method == "item" || c.method == "tolist" || c.method == "cpu"));
      if (read && ft.parent(py::ProgramModel::statement_of(ft, c.node)) == f.body) return true;
    }
    return false;
  };
  // a sync that runs whenever `p` runs: in `p` itself, not in a block nested in it (the body of
  // an `if` that may not be taken), or in the body of a function of the program `p` calls
  auto drains = [&](py::NodeId p) {
    for (py::NodeId x = p; x < t[p].subtree_end; ++x)
      if (t.is(x, py::K::Call) && py::ProgramModel::statement_of(t, x) == p)
        if (const py::Call* c = ctx.mod.call_at(x);
            c && (!sync_of(ctx, *c).empty() || (c->target && function_reads(*c->target))))
          return true;
    return false;
  };
  for (size_t i = 0; i < sites.size(); ++i) {
    leader[i] = i;
    if (!is_light(sites[i].stmt)) continue;
    // walk back through the block, and out of enclosing light `if`s into the blocks around them
    py::NodeId cur = sites[i].stmt;
    bool done = false;
    for (int hops = 0; hops < 4 && !done; ++hops) {
      py::NodeId block = t.parent(cur);
      if (block == py::kNone || !t.is(block, py::K::Block)) break;
      std::vector<py::NodeId> stmts = t.named_children(block);  // comments left out
      auto at = std::find(stmts.begin(), stmts.end(), cur);
      while (at != stmts.begin()) {
        py::NodeId p = *--at;
        if (!is_light(p)) {
          done = true;
          break;
        }
        if (auto k = last_site_in(p)) {
          if (dropped[*k]) {
            dropped[i] = true;
          } else {
            leader[i] = leader[*k];
            followers[leader[i]].push_back(i);
          }
          done = true;
          break;
        }
        // a read this rule leaves alone (an evaluation's outputs collected on the host) has
        // drained the queue all the same: this one waits for nothing
        if (drains(p)) {
          dropped[i] = true;
          done = true;
          break;
        }
      }
      if (done) break;
      cur = light_if_of(block);
      if (cur == py::kNone) break;
    }
  }
  // A read in another branch of an `if` than an earlier one of the same step (`if distributed:
  // loss_value = reduce(loss).item()` / `else: loss_value = loss.item()`): one of them runs each
  // step, so they are one finding, at the first, with the other as its note.
  std::vector<std::vector<size_t>> other_branch(sites.size());
  auto branch_of = [&](py::NodeId ifs, py::NodeId n) -> py::NodeId {  // the child of `ifs` holding n
    for (py::NodeId k = t.first_child(ifs); k != py::kNone; k = t.next_sibling(k))
      if (n >= k && n < t[k].subtree_end) return k;
    return py::kNone;
  };
  auto exclusive = [&](py::NodeId a, py::NodeId b) {
    for (py::NodeId x = t.parent(a); x != py::kNone; x = t.parent(x)) {
      if (t.is(x, py::K::FunctionDefinition) || t.is(x, py::K::ForStatement) || t.is(x, py::K::WhileStatement))
        return false;
      if (!t.is(x, py::K::IfStatement) || b < x || b >= t[x].subtree_end) continue;
      py::NodeId ba = branch_of(x, a), bb = branch_of(x, b);
      auto is_branch = [&](py::NodeId k) {
        return k != py::kNone && (k == t.field(x, py::F::Consequence) || t.is(k, py::K::ElseClause) ||
                                  t.is(k, py::K::ElifClause));
      };
      return ba != bb && is_branch(ba) && is_branch(bb);
    }
    return false;
  };
  for (size_t k = 0; k < sites.size(); ++k) {
    if (leader[k] != k || dropped[k]) continue;
    for (size_t i = 0; i < k; ++i) {
      if (leader[i] != i || dropped[i] || sites[i].sc.loop_node != sites[k].sc.loop_node ||
          sites[i].sc.loop_mod != sites[k].sc.loop_mod || !exclusive(sites[i].stmt, sites[k].stmt))
        continue;
      leader[k] = i;
      other_branch[i].push_back(k);
      break;
    }
  }
  auto follower_notes = [&](Finding& f, size_t leader_site) {
    for (size_t k : followers[leader_site])
      f.notes.push_back(RuleContext::note_at(ctx.mod, sites[k].node,
                                             "another read of this step, after this one with only light work between: "
                                             "it waits for the few kernels queued since; read it with the others"));
  };
  for (size_t i = 0; i < sites.size(); ++i) {
    if (leader[i] != i || dropped[i]) continue;
    Finding& f = ctx.report_per_step(sites[i].node, sites[i].message, sites[i].sc);
    follower_notes(f, i);
    for (size_t k : other_branch[i]) {
      f.notes.push_back(RuleContext::note_at(ctx.mod, sites[k].node,
                                             "the same read in another branch of the `if`: one of them runs each step"));
      follower_notes(f, k);
    }
  }
}

}  // namespace tl::rules
