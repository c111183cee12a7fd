#include "analyzer/python/guards.h"

namespace tl::py {

void collect_assigned_names(const Tree& t, NodeId n, std::unordered_set<std::string>& out) {
  std::vector<std::pair<NodeId, int>> stack{{n, 0}};
  auto add_target = [&](auto& self, NodeId tg) -> void {
    if (tg == kNone) return;
    switch (t.kind(tg)) {
      case K::Identifier: out.insert(std::string(t.text(tg))); break;
      case K::Attribute: {
        std::string d = dotted_text(t, tg);
        if (!d.empty()) out.insert(d);
        break;
      }
      case K::Subscript: {
        NodeId v = t.field(tg, F::Value);
        std::string d = dotted_text(t, v);
        if (!d.empty()) out.insert(d);
        break;
      }
      case K::PatternList: case K::TuplePattern: case K::ListPattern: case K::Tuple: case K::List:
      case K::ParenthesizedExpression: case K::ListSplatPattern: case K::ListSplat:
        for (NodeId c : t.named_child_range(tg)) self(self, c);
        break;
      default: break;
    }
  };
  while (!stack.empty()) {
    auto [x, d] = stack.back();
    stack.pop_back();
    K k = t.kind(x);
    if (x != n && (k == K::FunctionDefinition || k == K::ClassDefinition || k == K::Lambda)) continue;
    switch (k) {
      case K::Assignment: case K::AugmentedAssignment: add_target(add_target, t.field(x, F::Left)); break;
      case K::ForStatement: case K::ForInClause: add_target(add_target, t.field(x, F::Left)); break;
      case K::NamedExpression: add_target(add_target, t.field(x, F::Name)); break;
      case K::AsPattern: {
        NodeId al = t.field(x, F::Alias);
        if (al != kNone) add_target(add_target, t.first_named_child(al) != kNone ? t.first_named_child(al) : al);
        break;
      }
      default: break;
    }
    if (d > 1000) continue;
    for (NodeId c = t.first_child(x); c != kNone; c = t.next_sibling(c)) stack.emplace_back(c, d + 1);
  }
}

namespace {

bool reads_varying_name(const GuardContext& g, const std::string& dotted) {
  if (!g.varying || dotted.empty()) return false;
  size_t pos = 0;
  while (true) {
    size_t dot = dotted.find('.', pos);
    std::string prefix = dotted.substr(0, dot);
    if (g.varying->count(prefix)) return true;
    if (dot == std::string::npos) return false;
    pos = dot + 1;
  }
}

bool is_clock_or_random(std::string_view q) {
  return q.rfind("time.", 0) == 0 || q.rfind("random.", 0) == 0 || q.rfind("datetime.", 0) == 0 ||
         q.rfind("numpy.random.", 0) == 0 || q.rfind("torch.rand", 0) == 0;
}

}  // namespace

bool is_varying_expr(const GuardContext& g, NodeId cond) {
  const Tree& t = g.mod->tree;
  if (cond == kNone) return false;
  std::vector<std::pair<NodeId, int>> stack{{cond, 0}};
  while (!stack.empty()) {
    auto [x, d] = stack.back();
    stack.pop_back();
    switch (t.kind(x)) {
      case K::BinaryOperator: {
        if (t.operator_text(x) == "%") {
          NodeId l = t.field(x, F::Left);
          if (!(l != kNone && (t.is(l, K::String) || t.is(l, K::ConcatenatedString)))) return true;
        }
        break;
      }
      case K::Identifier:
        if (reads_varying_name(g, std::string(t.text(x)))) return true;
        continue;
      case K::Attribute: {
        std::string d2 = dotted_text(t, x);
        if (!d2.empty()) {
          if (reads_varying_name(g, d2)) return true;
          // agent.running_reward where Agent's methods update running_reward
          NodeId obj = t.field(x, F::Object), attr = t.field(x, F::Attribute);
          if (obj != kNone && attr != kNone && !(t.is(obj, K::Identifier) && t.text(obj) == "self"))
            if (const Class* c = g.model->instance_class(*g.mod, obj))
              if (c->attrs_mutated_outside_init.count(t.text(attr))) return true;
          continue;  // the whole chain was checked
        }
        break;
      }
      case K::Call: {
        NodeId callee = t.field(x, F::Function);
        std::string q = g.model->qualified_name(*g.mod, callee);
        if (is_clock_or_random(q)) return true;
        // the callee itself is a name, not a read of changing state: check only its receiver chain
        if (callee != kNone && t.is(callee, K::Attribute)) {
          NodeId obj = t.field(callee, F::Object);
          if (obj != kNone) stack.emplace_back(obj, d + 1);
        }
        NodeId args = t.field(x, F::Arguments);
        if (args != kNone) stack.emplace_back(args, d + 1);
        continue;
      }
      case K::Lambda: continue;
      default: break;
    }
    if (d > 400) continue;
    for (NodeId c = t.first_child(x); c != kNone; c = t.next_sibling(c))
      if (t[c].named) stack.emplace_back(c, d + 1);
  }
  return false;
}

namespace {

bool has_modulo(const Tree& t, NodeId n) {
  if (n == kNone) return false;
  std::vector<NodeId> stack{n};
  while (!stack.empty()) {
    NodeId x = stack.back();
    stack.pop_back();
    if (t.is(x, K::BinaryOperator) && t.operator_text(x) == "%") return true;
    for (NodeId c = t.first_child(x); c != kNone; c = t.next_sibling(c))
      if (t[c].named) stack.push_back(c);
  }
  return false;
}

}  // namespace

bool returns_periodic(const Function& f) {
  if (f.body == kNone) return false;
  const Tree& ft = f.mod->tree;
  for (NodeId y = f.body; y < ft[f.body].subtree_end; ++y)
    if (ft.is(y, K::ReturnStatement) && has_modulo(ft, ft.first_named_child(y))) return true;
  return false;
}

bool ProgramModel::periodic_predicate_name(std::string_view name) const {
  std::lock_guard lock(predicate_memo_->mu);
  auto [it, fresh] = predicate_memo_->answers.try_emplace(std::string(name), false);
  if (!fresh) return it->second;
  bool any = false, all = true;
  for (const Function* f : functions_)
    if (f->cls && f->name == name) {
      any = true;
      all &= returns_periodic(*f);
    }
  return it->second = any && all;
}

namespace {

// A periodic condition: a `%` in it, or a call of an analysed predicate that returns one
// (`if not self.should_log(step): return` over `return step == 1 or step % self.log_freq == 0`).
// A name the function binds once to such a test counts too (`should_log = self.should_log(step)`
// then `if not should_log: return`).
// `a < b`, `a <= b`, `a > b`, `a >= b`: a test a moving threshold can be
bool ordering_comparison(const Tree& t, NodeId x) {
  if (!t.is(x, K::ComparisonOperator)) return false;
  std::string_view op = t.operator_text(x);
  return op == "<" || op == "<=" || op == ">" || op == ">=";
}

bool periodic(const GuardContext& g, NodeId cond, bool moving_ok, int depth = 0) {
  const Tree& t = g.mod->tree;
  if (has_modulo(t, cond)) return true;
  if (cond == kNone) return false;
  // a moving threshold (StyleGAN's and EDM's tick: `if cur_nimg < tick_start_nimg + kimg_per_tick
  // * 1000: continue`, with `tick_start_nimg = cur_nimg` once a tick): a counter compared with a
  // bound the loop moves itself, both sides changing across iterations, when the iteration has
  // trained before the test (`moving_ok`); before the training work, the same test is a wait for
  // new data (`if current_version <= last_trained: continue`), and what follows is the step. A
  // warm-up or resume skip (`if step < args.warmup: continue`) compares with a bound that stays.
  for (NodeId x = cond; moving_ok && x < t[cond].subtree_end; ++x) {
    if (!ordering_comparison(t, x)) continue;
    auto sides = t.named_children(x);
    if (sides.size() == 2 && is_varying_expr(g, sides[0]) && is_varying_expr(g, sides[1])) return true;
  }
  // the condition is the name (or its negation): the test's value, not a number made with `%`
  // (`step < resume_step` where `resume_step = total % per_epoch` is a warm-up skip)
  NodeId name = cond;
  while (name != kNone && (t.is(name, K::ParenthesizedExpression) || t.is(name, K::NotOperator)))
    name = t.is(name, K::NotOperator) ? t.field(name, F::Argument) : t.first_named_child(name);
  if (name != kNone && t.is(name, K::Identifier) && depth == 0) {
    const Function* ef = g.mod->enclosing_function(name);
    const Scope* sc = ef ? &ef->scope : &g.mod->scope;
    auto* bs = sc->find_local(t.text(name));
    return bs && bs->size() == 1 && bs->front().kind == Binding::Kind::Assign && bs->front().whole &&
           periodic(g, bs->front().value, moving_ok, depth + 1);
  }
  for (NodeId x = cond; x < t[cond].subtree_end; ++x) {
    if (!t.is(x, K::Call)) continue;
    const Call* c = g.mod->call_at(x);
    if (!c) continue;
    if (c->target ? returns_periodic(*c->target)
                  : !c->method.empty() && c->receiver != kNone && g.model->periodic_predicate_name(c->method))
      return true;
  }
  return false;
}

// An `a == b` test: true on few iterations (`steps == 0`), so its `else` is the usual path.
bool equality_test(const Tree& t, NodeId cond) {
  while (cond != kNone && t.is(cond, K::ParenthesizedExpression)) cond = t.first_named_child(cond);
  return cond != kNone && t.is(cond, K::ComparisonOperator) && t.operator_text(cond) == "==";
}

// Does the if statement `n` (or a branch nested in it) exit on the usual path: a `continue` (or a
// `return` in a function body) reached under a periodic condition (`if steps % every != 0:
// return`), where every other condition on the way is configuration (`if args.every_n_epochs is
// not None:`, either branch) or the `else` of an equality test (`if steps == 0: ... else:`)? Then
// what follows runs only on the periodic iterations. A periodic branch that exits only under a
// further varying test (`if i % 100 == 0: if torch.isnan(loss): return`) exits rarely: no.
bool exits_periodically(const GuardContext& g, NodeId n, bool periodic_seen, bool moving_ok, int depth) {
  const Tree& t = g.mod->tree;
  if (n == kNone || depth > 32) return false;
  switch (t.kind(n)) {
    case K::FunctionDefinition: case K::ClassDefinition: case K::Lambda:
    case K::ForStatement: case K::WhileStatement: case K::TryStatement: case K::WithStatement:
      return false;
    case K::ContinueStatement: return periodic_seen;
    case K::ReturnStatement: return periodic_seen && g.function_body;
    case K::Block: {
      for (NodeId s = t.first_child(n); s != kNone; s = t.next_sibling(s))
        if (exits_periodically(g, s, periodic_seen, moving_ok, depth + 1)) return true;
      return false;
    }
    case K::IfStatement: {
      // the if, then each elif, then the else: the conditions tested before a branch is taken
      NodeId cond = t.field(n, F::Condition);
      bool seen = periodic_seen;
      bool can_else = true;  // the branches after this test are on a usual path
      auto test = [&](NodeId c, NodeId body) {
        bool varying = is_varying_expr(g, c);
        bool per = varying && periodic(g, c, moving_ok);
        if (can_else && (!varying || per) && exits_periodically(g, body, seen || per, moving_ok, depth + 1))
          return true;
        // the next branch runs when this test fails: usual when the test is configuration, periodic,
        // or an equality
        can_else = can_else && (!varying || per || equality_test(t, c));
        seen = seen || per;
        return false;
      };
      if (test(cond, t.field(n, F::Consequence))) return true;
      for (NodeId a = t.first_child(n); a != kNone; a = t.next_sibling(a)) {
        if (t.is(a, K::ElifClause)) {
          if (test(t.field(a, F::Condition), t.field(a, F::Consequence))) return true;
        } else if (t.is(a, K::ElseClause)) {
          NodeId body = t.field(a, F::Body);
          if (body == kNone) body = t.first_named_child(a);
          if (can_else && exits_periodically(g, body, seen, moving_ok, depth + 1)) return true;
        }
      }
      return false;
    }
    default: return false;
  }
}

// An early exit before `child` in `block` that skips it on all but the periodic iterations:
// `if <periodic cond>: ... continue` (or `return` in a function body), also nested in branches
// of configuration (exits_periodically).
bool skipped_by_early_exit(const GuardContext& g, NodeId block, NodeId child) {
  const Tree& t = g.mod->tree;
  for (NodeId s = t.first_child(block); s != kNone && s != child; s = t.next_sibling(s)) {
    if (!t.is(s, K::IfStatement)) continue;
    // a backward pass or an optimizer step before the exit in the block, or in what it calls
    auto trained = [&] {
      auto trains = [&](const Call& c) {
        return c.node > block && c.node < s &&
               (ProgramModel::is_backward(c) || g.model->is_optimizer_step(*g.mod, c) ||
                (c.target && (c.target->reaches_backward || c.target->reaches_opt_step)));
      };
      // the calls of the function holding the block (a module's own calls at its top level)
      if (const Function* f = g.mod->enclosing_function(s)) {
        for (uint32_t ci : f->calls)
          if (trains(g.mod->calls[ci])) return true;
        return false;
      }
      for (const Call& c : g.mod->calls)
        if (trains(c)) return true;
      return false;
    };
    // Only a periodic skip (`if i % k: continue`) makes the rest periodic; a warm-up or
    // bad-batch skip (`if step < warmup: continue`) leaves it running on (almost) every step.
    if (exits_periodically(g, s, false, false, 0)) return true;
    // a moving threshold needs an ordering comparison in the test; only then is the block read
    // for training work (once per such `if`)
    bool ordering = false;
    for (NodeId x = s; x < t[s].subtree_end && !ordering; ++x) ordering = ordering_comparison(t, x);
    if (ordering && trained() && exits_periodically(g, s, false, true, 0)) return true;
  }
  return false;
}

// An opt-in debug mode: `if debug:`, `if self.debug:`, `if args.debug_nans:`, or an environment
// variable that says so (`if os.environ.get("ENGINE_DEBUG"):`, unset unless the user sets it).
// What it turns on (a forced collection, a value printed every step) is what the user asked for
// while debugging, not the training run's cost. A verbosity switch (`if args.verbose:`) is often
// on by default: what it prints is the run's normal logging.
bool debug_name(std::string name) {
  for (char& ch : name) ch = ascii_lower(ch);
  return name.starts_with("debug") || name.find("_debug") != std::string::npos;
}

bool debug_switch(const Tree& t, NodeId cond) {
  while (cond != kNone && t.is(cond, K::ParenthesizedExpression)) cond = t.first_named_child(cond);
  if (cond == kNone) return false;
  if (t.is(cond, K::Identifier) || t.is(cond, K::Attribute))
    return debug_name(std::string(last_component(dotted_text(t, cond))));
  // an environment variable: os.environ.get("ENGINE_DEBUG"), os.getenv("DEBUG"), os.environ["DEBUG"]
  NodeId key = kNone;
  if (t.is(cond, K::Call)) {
    std::string callee = dotted_text(t, t.field(cond, F::Function));
    NodeId args = t.field(cond, F::Arguments);
    if ((callee == "os.environ.get" || callee == "os.getenv" || callee == "environ.get" || callee == "getenv") &&
        args != kNone)
      key = t.first_named_child(args);
  } else if (t.is(cond, K::Subscript)) {
    if (dotted_text(t, t.field(cond, F::Value)) == "os.environ") key = t.field(cond, F::Subscript);
  }
  if (key == kNone || !t.is(key, K::String)) return false;
  std::string k(t.text(key));
  for (char& ch : k) ch = ascii_lower(ch);
  return k.find("debug") != std::string::npos;
}

}  // namespace

bool is_guarded(const GuardContext& g, NodeId node) {
  const Tree& t = g.mod->tree;
  NodeId child = node;
  for (NodeId p = t.parent(node); p != kNone && child != g.boundary; child = p, p = t.parent(p)) {
    switch (t.kind(p)) {
      case K::IfStatement: {
        NodeId cond = t.field(p, F::Condition);
        if (child != cond && is_varying_expr(g, cond)) return true;
        if (child == t.field(p, F::Consequence) && debug_switch(t, cond)) return true;
        break;
      }
      case K::ElifClause: {
        NodeId cond = t.field(p, F::Condition);
        if (child != cond && is_varying_expr(g, cond)) return true;
        break;
      }
      case K::ConditionalExpression: {
        auto kids = t.named_children(p);
        if (kids.size() == 3 && child != kids[1] && is_varying_expr(g, kids[1])) return true;
        break;
      }
      case K::BooleanOperator: {
        NodeId left = t.field(p, F::Left);
        if (child != left && is_varying_expr(g, left)) return true;
        break;
      }
      case K::IfClause: break;
      case K::ExceptClause: case K::ExceptGroupClause: case K::CaseClause:
        return true;  // runs only on an exception / a matching case: never assumed per step
      case K::Block:
        if (skipped_by_early_exit(g, p, child)) return true;
        break;
      default: break;
    }
    if (p == g.boundary) break;
  }
  return false;
}

}  // namespace tl::py
