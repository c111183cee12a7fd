// Phase 1 of the model: one walk over one file's tree collecting scopes, bindings, calls,
// loops, classes and argparse definitions. Runs in parallel across files; touches only its
// own Module.
#include "analyzer/python/collect.h"

#include <algorithm>
#include <string>

#include "analyzer/core/huge_pages.h"

namespace tl::py {
namespace {

constexpr int kMaxDepth = 1500;  // deeper expression nesting is skipped, never overflowed

struct Collector {
  Module& m;
  const Tree& t;
  Function* fn = nullptr;
  Class* cls = nullptr;        // the class whose body we are directly in
  Class* method_cls = nullptr; // the class of the method we are in
  Scope* scope;
  Scope class_dummy;           // class bodies bind here (class attributes are not in scope)
  std::vector<int32_t> loop_stack;
  int depth = 0;
  bool has_globals = true;  // false: the module has no `global` statement to pre-scan for

  explicit Collector(Module& mod) : m(mod), t(mod.tree), scope(&mod.scope) {}

  void bind(std::string_view name, Binding b) {
    if (name.empty()) return;
    Scope* s = scope;
    if (fn && fn->scope.globals.count(name)) s = &m.scope;
    s->names.add(name, std::move(b));
  }

  void bind_target(NodeId target, NodeId value, NodeId stmt, Binding::Kind kind, bool whole) {
    if (target == kNone) return;
    switch (t.kind(target)) {
      case K::Identifier: {
        Binding b;
        b.kind = kind;
        b.value = value;
        b.stmt = stmt;
        b.whole = whole;
        bind(t.text(target), b);
        break;
      }
      case K::PatternList: case K::TuplePattern: case K::ListPattern: case K::Tuple: case K::List:
      case K::ParenthesizedExpression: {
        auto targets = t.named_children(target);
        // `self.a, self.b = a, b`: each attribute takes its own element (names keep the whole
        // value, marked not whole, as before)
        std::vector<NodeId> elements;
        if (value != kNone && kind == Binding::Kind::Assign &&
            (t.is(value, K::ExpressionList) || t.is(value, K::Tuple) || t.is(value, K::List)))
          elements = t.named_children(value);
        bool pairwise = elements.size() == targets.size();
        for (NodeId e : elements)
          if (t.is(e, K::ListSplat)) pairwise = false;
        for (size_t i = 0; i < targets.size(); ++i) {
          NodeId c = targets[i];
          if (pairwise && t.is(c, K::Attribute)) bind_target(c, elements[i], stmt, kind, true);
          else bind_target(c, value, stmt, kind, false);
        }
        break;
      }
      case K::ListSplatPattern: case K::ListSplat:
        for (NodeId c : t.named_child_range(target)) bind_target(c, kNone, stmt, kind, false);
        break;
      case K::Attribute: {
        NodeId obj = t.field(target, F::Object);
        NodeId attr = t.field(target, F::Attribute);
        if (method_cls && obj != kNone && attr != kNone && t.is(obj, K::Identifier) && t.text(obj) == "self") {
          // one element of an unpacked value (`self.data, self.vocab = tokenize(path)`): the
          // attribute is assigned a value the collection does not know (kNone)
          if (kind == Binding::Kind::Assign) method_cls->attr_values[t.text(attr)].push_back(whole ? value : kNone);
          if (!fn || (fn->name != "__init__" && fn->name != "setup" && fn->name != "__post_init__"))
            method_cls->attrs_mutated_outside_init.insert(t.text(attr));
        }
        break;
      }
      default:
        break;
    }
  }

  void visit_children(NodeId n) {
    for (NodeId c = t.first_child(n); c != kNone; c = t.next_sibling(c)) visit(c);
  }

  void params_of(Function* f, NodeId params) {
    if (params == kNone) return;
    for (NodeId p : t.named_child_range(params)) {
      NodeId name = kNone, def = kNone;
      switch (t.kind(p)) {
        case K::Identifier: name = p; break;
        case K::DefaultParameter: case K::TypedDefaultParameter:
          name = t.field(p, F::Name);
          def = t.field(p, F::Value);
          break;
        case K::TypedParameter: case K::ListSplatPattern: case K::DictionarySplatPattern: {
          NodeId c = t.first_named_child(p);
          if (c != kNone && t.is(c, K::Identifier)) name = c;
          else if (c != kNone) {
            NodeId cc = t.first_named_child(c);
            if (cc != kNone && t.is(cc, K::Identifier)) name = cc;
          }
          break;
        }
        default: break;
      }
      if (name == kNone || !t.is(name, K::Identifier)) continue;
      std::string_view pn = t.text(name);
      f->params.push_back(pn);
      Binding b;
      b.kind = Binding::Kind::Param;
      b.stmt = p;
      b.default_value = def;
      f->scope.names.add(pn, b);
      if (def != kNone) visit(def);  // defaults are evaluated in the enclosing scope
    }
  }

  void visit_function(NodeId n) {
    auto f = std::make_unique<Function>();
    f->mod = &m;
    f->def = n;
    NodeId name = t.field(n, F::Name);
    f->name = name != kNone ? t.text(name) : std::string_view("<lambda>");
    f->body = t.field(n, F::Body);
    f->cls = cls;
    f->outer = fn;
    std::string prefix = cls ? cls->qualname + "." : (fn ? fn->qualname + ".<locals>." : std::string());
    f->qualname = prefix + std::string(f->name);
    // Python scoping: class bodies are skipped by nested functions.
    f->scope.parent = fn ? &fn->scope : &m.scope;
    f->scope.fn = f.get();
    NodeId parent = t.parent(n);
    if (parent != kNone && t.is(parent, K::DecoratedDefinition)) {
      for (NodeId c : t.named_child_range(parent))
        if (t.is(c, K::Decorator)) {
          NodeId e = t.first_named_child(c);
          if (e != kNone) {
            f->decorator_exprs.push_back(e);
            visit(e);
          }
        }
    }
    Function* fp = f.get();
    if (cls) {
      cls->methods[f->name] = fp;
    } else {
      Binding b;
      b.kind = Binding::Kind::Def;
      b.stmt = n;
      b.fn = fp;
      bind(f->name, b);
    }
    m.functions.push_back(std::move(f));
    // Enter the function.
    Function* saved_fn = fn;
    Class* saved_cls = cls;
    Class* saved_mcls = method_cls;
    Scope* saved_scope = scope;
    auto saved_loops = std::move(loop_stack);
    loop_stack.clear();
    method_cls = cls ? cls : (saved_fn ? saved_mcls : nullptr);
    // params' defaults are visited in the enclosing context
    params_of(fp, t.field(n, F::Parameters));
    fn = fp;
    cls = nullptr;
    scope = &fp->scope;
    // Pre-scan `global` declarations so that bindings before them still go to the module.
    if (fp->body != kNone && has_globals) prescan_globals(fp->body, fp);
    if (fp->body != kNone) visit(fp->body);
    fn = saved_fn;
    cls = saved_cls;
    method_cls = saved_mcls;
    scope = saved_scope;
    loop_stack = std::move(saved_loops);
  }

  void prescan_globals(NodeId n, Function* f) {
    for (NodeId c = t.first_child(n); c != kNone; c = t.next_sibling(c)) {
      K k = t.kind(c);
      if (k == K::FunctionDefinition || k == K::ClassDefinition || k == K::Lambda) continue;
      if (k == K::GlobalStatement) {
        for (NodeId id : t.named_child_range(c))
          if (t.is(id, K::Identifier)) f->scope.globals.insert(t.text(id));
        continue;
      }
      if (t[c].named && k != K::Call && k != K::Attribute) prescan_globals(c, f);
    }
  }

  void visit_class(NodeId n) {
    auto c = std::make_unique<Class>();
    c->mod = &m;
    c->def = n;
    NodeId name = t.field(n, F::Name);
    c->name = name != kNone ? t.text(name) : std::string_view();
    c->qualname = (cls ? cls->qualname + "." : (fn ? fn->qualname + ".<locals>." : std::string())) + std::string(c->name);
    NodeId sup = t.field(n, F::Superclasses);
    if (sup != kNone)
      for (NodeId b : t.named_child_range(sup)) {
        if (!t.is(b, K::KeywordArgument)) c->base_exprs.push_back(b);
        visit(b);
      }
    Class* cp = c.get();
    if (!cls) {
      Binding b;
      b.kind = Binding::Kind::ClassDef;
      b.stmt = n;
      b.cls = cp;
      bind(c->name, b);
    }
    m.classes.push_back(std::move(c));
    Class* saved = cls;
    Scope* saved_scope = scope;
    auto saved_loops = std::move(loop_stack);
    loop_stack.clear();
    cls = cp;
    class_dummy.names.clear();
    scope = &class_dummy;
    NodeId body = t.field(n, F::Body);
    if (body != kNone) visit(body);
    cls = saved;
    scope = saved_scope;
    loop_stack = std::move(saved_loops);
  }

  // Does this loop body end in an unconditional `return`/`break`/`raise`, with no `continue` of the
  // loop that could skip it? Then it runs at most once (a throughput probe timing one batch, a
  // smoke test that takes the first one): its statements do not run every step.
  bool ends_first_iteration(NodeId body) const {
    if (body == kNone) return false;
    NodeId last = last_statement(t, body);
    if (last == kNone ||
        !(t.is(last, K::ReturnStatement) || t.is(last, K::BreakStatement) || t.is(last, K::RaiseStatement)))
      return false;
    std::vector<NodeId> stack{body};
    for (size_t guard = 0; !stack.empty() && guard < 200000; ++guard) {
      NodeId x = stack.back();
      stack.pop_back();
      if (t.is(x, K::ContinueStatement)) return false;
      if (x != body && (t.is(x, K::ForStatement) || t.is(x, K::WhileStatement) || t.is(x, K::FunctionDefinition) ||
                        t.is(x, K::ClassDefinition) || t.is(x, K::Lambda)))
        continue;  // a `continue` in there is another loop's
      for (NodeId c : t.named_child_range(x)) stack.push_back(c);
    }
    return stack.empty();
  }

  // Is the iterable a tuple, list or set written out in the code, a handful of values with no
  // unpacking (`for num_bins in (0, 2, 10):`, `for name in ["train", "val"]:`)? Each iteration
  // then runs a configuration of its own (a smoke test building one model per setting, a sweep
  // whose every value trains a model in a loop of its own): a few runs, not training steps.
  bool written_out(NodeId it) const {
    if (it == kNone) return false;
    if (t.is(it, K::ParenthesizedExpression)) it = t.first_named_child(it);
    if (it == kNone || !(t.is(it, K::Tuple) || t.is(it, K::List) || t.is(it, K::ExpressionList) ||
                         t.type_name(it) == "set"))
      return false;
    size_t n = 0;
    for (NodeId e : t.named_child_range(it)) {
      if (t.is(e, K::ListSplat) || t.is(e, K::Comment) || ++n > 16) return false;
    }
    return n > 0;
  }

  void visit_loop(NodeId n) {
    Loop L;
    L.index = static_cast<uint32_t>(m.loops.size());
    L.node = n;
    L.fn = fn;
    L.parent = loop_stack.empty() ? -1 : loop_stack.back();
    L.runs_once = ends_first_iteration(t.field(n, F::Body));
    bool is_for = t.is(n, K::ForStatement);
    if (is_for) L.over_display = written_out(t.field(n, F::Right));
    m.loop_by_node[n] = L.index;
    m.loops.push_back(std::move(L));
    int32_t idx = static_cast<int32_t>(m.loops.size() - 1);
    if (is_for) {
      NodeId left = t.field(n, F::Left), right = t.field(n, F::Right);
      if (right != kNone) visit(right);  // the iterable is evaluated once, outside the loop
      bind_target(left, right, n, Binding::Kind::ForTarget, false);
      loop_stack.push_back(idx);
      if (left != kNone) visit(left);
      NodeId body = t.field(n, F::Body);
      if (body != kNone) visit(body);
      loop_stack.pop_back();
    } else {
      loop_stack.push_back(idx);
      NodeId cond = t.field(n, F::Condition);
      if (cond != kNone) visit(cond);
      NodeId body = t.field(n, F::Body);
      if (body != kNone) visit(body);
      loop_stack.pop_back();
    }
    NodeId alt = t.field(n, F::Alternative);
    if (alt != kNone) visit(alt);
  }

  void visit_call(NodeId n) {
    Call c;
    c.mod = &m;
    c.node = n;
    c.callee = t.field(n, F::Function);
    c.fn = fn;
    c.loop = loop_stack.empty() ? -1 : loop_stack.back();
    if (c.callee != kNone && t.is(c.callee, K::Attribute)) {
      NodeId a = t.field(c.callee, F::Attribute);
      if (a != kNone) c.method = t.text(a);
      c.receiver = t.field(c.callee, F::Object);
    }
    uint32_t idx = static_cast<uint32_t>(m.calls.size());
    m.call_by_node[n] = idx;
    if (fn) fn->calls.push_back(idx);
    for (int32_t li : loop_stack) m.loops[li].calls.push_back(idx);
    if (c.method == "add_argument") collect_argdef(n);
    if (!fn && c.callee != kNone && t.is(c.callee, K::Identifier) && t.text(c.callee) == "exec")
      m.has_module_exec = true;
    m.calls.push_back(c);
    visit_children(n);
  }

  void collect_argdef(NodeId call) {
    NodeId args = t.field(call, F::Arguments);
    if (args == kNone) return;
    ArgDef d;
    std::string first_long, first_any;
    for (NodeId a : t.named_child_range(args)) {
      if (t.is(a, K::String)) {
        std::string s = string_literal_value(t, a);
        if (s.rfind("--", 0) == 0 && first_long.empty()) first_long = s.substr(2);
        if (first_any.empty()) first_any = s;
      } else if (t.is(a, K::KeywordArgument)) {
        NodeId k = t.field(a, F::Name), v = t.field(a, F::Value);
        if (k == kNone || v == kNone) continue;
        std::string_view kn = t.text(k);
        if (kn == "dest") d.dest = string_literal_value(t, v);
        else if (kn == "default") { d.default_value = v; d.has_default = true; }
        else if (kn == "action") d.action = string_literal_value(t, v);
      }
    }
    if (d.dest.empty()) {
      std::string s = !first_long.empty() ? first_long : first_any;
      while (!s.empty() && s[0] == '-') s.erase(0, 1);
      for (char& ch : s)
        if (ch == '-') ch = '_';
      d.dest = s;
    }
    d.mod = &m;
    if (!d.dest.empty()) m.argdefs.push_back(std::move(d));
  }

  void visit_import(NodeId n) {
    for (NodeId c : t.fields(n, F::Name)) {
      if (t.is(c, K::DottedName)) {
        std::string_view full = t.text(c);
        m.imported_modules.emplace_back(full);
        Binding b;
        b.kind = Binding::Kind::Import;
        b.stmt = n;
        b.qname = full.substr(0, full.find('.'));
        NodeId firstid = t.first_named_child(c);
        if (firstid != kNone) bind(t.text(firstid), b);
      } else if (t.is(c, K::AliasedImport)) {
        NodeId nm = t.field(c, F::Name), al = t.field(c, F::Alias);
        if (nm == kNone || al == kNone) continue;
        std::string_view full = t.text(nm);
        m.imported_modules.emplace_back(full);
        Binding b;
        b.kind = Binding::Kind::Import;
        b.stmt = n;
        b.qname = full;
        bind(t.text(al), b);
      }
    }
  }

  void visit_import_from(NodeId n) {
    NodeId mod = t.field(n, F::ModuleName);
    if (mod == kNone) return;
    std::string base;
    for (char ch : t.text(mod))
      if (ch != ' ' && ch != '\t' && ch != '\\' && ch != '\n' && ch != '\r') base.push_back(ch);
    m.imported_modules.push_back(base);
    bool any = false;
    for (NodeId c : t.fields(n, F::Name)) {
      any = true;
      NodeId nm = c, al = kNone;
      if (t.is(c, K::AliasedImport)) {
        nm = t.field(c, F::Name);
        al = t.field(c, F::Alias);
      }
      if (nm == kNone) continue;
      std::string name(t.text(nm));
      std::string q = base.empty() || base.back() == '.' ? base + name : base + "." + name;
      m.imported_modules.push_back(q);  // `from pkg import submodule`
      Binding b;
      b.kind = Binding::Kind::Import;
      b.stmt = n;
      b.qname = m.import_qnames.emplace_back(std::move(q));
      bind(al != kNone ? t.text(al) : t.text(nm), b);
    }
    for (NodeId c : t.named_child_range(n))
      if (t.is(c, K::WildcardImport)) m.star_import_names.emplace_back(base, n);
    (void)any;
  }

  void visit_assignment(NodeId n) {
    NodeId left = t.field(n, F::Left), right = t.field(n, F::Right);
    // a = b = value: the innermost right-hand side is every target's value
    NodeId value = right;
    while (value != kNone && t.is(value, K::Assignment)) value = t.field(value, F::Right);
    bind_target(left, value, n, Binding::Kind::Assign, true);
    if (left != kNone) visit(left);
    if (right != kNone) visit(right);
  }

  void visit(NodeId n) {
    if (++depth > kMaxDepth) {
      --depth;
      return;
    }
    switch (t.kind(n)) {
      case K::FunctionDefinition: visit_function(n); break;
      case K::ClassDefinition: visit_class(n); break;
      case K::DecoratedDefinition: {
        NodeId d = t.field(n, F::Definition);
        if (d != kNone) visit(d);
        break;
      }
      case K::ForStatement: case K::WhileStatement: visit_loop(n); break;
      case K::Call: visit_call(n); break;
      case K::Assignment: m.assignments.push_back(n); visit_assignment(n); break;
      case K::ExpressionStatement: m.expression_statements.push_back(n); visit_children(n); break;
      case K::AugmentedAssignment: {
        m.assignments.push_back(n);
        bind_target(t.field(n, F::Left), t.field(n, F::Right), n, Binding::Kind::AugAssign, true);
        visit_children(n);
        break;
      }
      case K::NamedExpression: {
        NodeId nm = t.field(n, F::Name), v = t.field(n, F::Value);
        bind_target(nm, v, n, Binding::Kind::Assign, true);
        visit_children(n);
        break;
      }
      case K::ImportStatement: visit_import(n); break;
      case K::ImportFromStatement: visit_import_from(n); break;
      case K::GlobalStatement:
        if (fn)
          for (NodeId id : t.named_child_range(n))
            if (t.is(id, K::Identifier)) fn->scope.globals.insert(t.text(id));
        break;
      case K::WithItem: {
        NodeId v = t.field(n, F::Value);
        if (v != kNone && t.is(v, K::AsPattern)) {
          NodeId expr = t.first_named_child(v);
          NodeId alias = t.field(v, F::Alias);
          if (alias != kNone) {
            NodeId target = t.first_named_child(alias);
            bind_target(target != kNone ? target : alias, expr, n, Binding::Kind::WithTarget, true);
          }
        }
        visit_children(n);
        break;
      }
      case K::IfStatement: {
        if (!fn && t.parent(n) == t.root()) {
          NodeId cond = t.field(n, F::Condition);
          if (cond != kNone) {
            auto s = t.text(cond);
            if (s.find("__name__") != std::string_view::npos && s.find("__main__") != std::string_view::npos) {
              m.has_main_guard = true;
              m.main_guards.push_back(n);
            }
          }
        }
        visit_children(n);
        break;
      }
      default:
        visit_children(n);
        break;
    }
    --depth;
  }
};

}  // namespace

namespace {
// One pass over the node kinds before the visit: every function definition in pre-order with the
// index of the nearest one around it (the fn_defs / fn_def_outer half of enclosing_function's
// index: it must see definitions the collector does not enter, so the visit cannot fill it), and
// room for what the visit collects, reserved once at a bound of its size (the calls, loops and
// statements of a file: a vector grown by doubling copies itself and touches twice its pages, and
// a huge file's are tens of megabytes).
// Returns whether the module holds a `global` statement.
bool scan_kinds(Module& m) {
  const Tree& t = m.tree;
  size_t calls = 0, loops = 0, assignments = 0, statements = 0;
  bool globals = false;
  std::vector<int32_t> open;  // indices of the definitions around the node scanned
  for (NodeId n = 0; n < t.size(); ++n) {
    switch (t.kind(n)) {
      case K::Call: ++calls; break;
      case K::ForStatement: case K::WhileStatement: ++loops; break;
      case K::Assignment: case K::AugmentedAssignment: ++assignments; break;
      case K::ExpressionStatement: ++statements; break;
      case K::GlobalStatement: globals = true; break;
      case K::FunctionDefinition:
        while (!open.empty() && !t.contains(m.fn_defs[static_cast<size_t>(open.back())], n)) open.pop_back();
        m.fn_def_outer.push_back(open.empty() ? -1 : open.back());
        open.push_back(static_cast<int32_t>(m.fn_defs.size()));
        m.fn_defs.push_back(n);
        break;
      default: break;
    }
  }
  reserve_with_huge_pages(m.calls, calls);
  m.call_by_node.reserve(calls);
  m.loops.reserve(loops);
  m.loop_by_node.reserve(loops);
  m.assignments.reserve(assignments);
  m.expression_statements.reserve(statements);
  return globals;
}

// The Function of each definition in fn_defs, null where the collector did not enter it.
void link_function_defs(Module& m) {
  std::vector<std::pair<NodeId, Function*>> entered;
  for (auto& f : m.functions)
    if (m.tree.is(f->def, K::FunctionDefinition)) entered.emplace_back(f->def, f.get());
  std::sort(entered.begin(), entered.end());
  m.fn_def_fn.reserve(m.fn_defs.size());
  size_t next = 0;
  for (NodeId n : m.fn_defs) {
    while (next < entered.size() && entered[next].first < n) ++next;
    m.fn_def_fn.push_back(next < entered.size() && entered[next].first == n ? entered[next].second : nullptr);
  }
}
}  // namespace

void collect_module(Module& m) {
  if (m.tree.root() == kNone) return;
  m.scope.fn = nullptr;
  m.scope.parent = nullptr;
  const bool globals = scan_kinds(m);
  Collector c(m);
  c.has_globals = globals;
  c.visit(m.tree.root());
  link_function_defs(m);
  m.scope.names.seal();
  for (auto& f : m.functions) f->scope.names.seal();
  // the model keeps these for the whole run: no room left over (the visit may collect fewer
  // than scan_kinds counted, in nesting too deep for it)
  m.calls.shrink_to_fit();
  m.loops.shrink_to_fit();
  m.assignments.shrink_to_fit();
  m.expression_statements.shrink_to_fit();
}

}  // namespace tl::py
