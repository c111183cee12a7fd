// Phases 2-4 of the model: index modules, resolve calls (in parallel), then the linear passes
// over the call graph: optimizer-step / backward reach, loop classification, programs, and the
// per-step reach of functions called from step loops.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <atomic>
#include <deque>
#include <filesystem>
#include <thread>

#include "analyzer/core/parallel.h"
#include "analyzer/python/collect.h"
#include "analyzer/python/guards.h"
#include "analyzer/python/model.h"
#include "analyzer/python/reach.h"

namespace tl::py {


namespace {


bool is_optimizer_name(std::string_view recv_last) {
  std::string s;
  for (char c : recv_last) s.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (s.find("sched") != std::string::npos || s.find("lr") == 0) return false;
  if (s.find("optim") != std::string::npos) return true;
  if (s == "opt" || s.rfind("opt_", 0) == 0 || s.rfind("opt", 0) == 0) {
    // optG, optD, opt_d, opt1; not "option"/"options"/"opts"
    if (s.rfind("option", 0) == 0 || s == "opts") return false;
    return true;
  }
  if (s.find("scaler") != std::string::npos) return true;
  if (s.find("engine") != std::string::npos) return true;
  return false;
}

}  // namespace

struct ModelBuilder {
  // Names of device values, asked about with the text of identifiers and attributes (NameHash).
  using NameSet = StringSet;  // (holding copies: insert_copy)

  ProgramModel& pm;
  unsigned threads = 1;  // for the passes that are independent per module
  // per module: its unresolved calls whose resolution met a parameter (resolve_param_instances)
  std::vector<std::vector<uint32_t>> param_pending;

  bool is_opt_step(const Module& m, const Call& c) const { return pm.is_optimizer_step(m, c); }
  static bool is_backward(const Call& c) { return ProgramModel::is_backward(c); }

  // enumerate / zip / iter / tqdm / rich's track: iterating the call iterates its argument
  static bool is_loader_wrapper(const Module& m, NodeId call) {
    const Call* c = m.call_at(call);
    if (!c) return false;
    std::string_view q = c->qname;
    return q == "builtins.enumerate" || q == "builtins.zip" || q == "builtins.iter" || q.rfind("tqdm", 0) == 0 ||
           q.rfind("rich.progress.track", 0) == 0;
  }

  bool is_loader_expr(const Module& m, NodeId e, int depth = 0) const {
    const Tree& t = m.tree;
    if (e == kNone || depth > 6) return false;
    switch (t.kind(e)) {
      case K::Identifier: case K::Attribute: {
        std::string d = dotted_text(t, e);
        if (!d.empty() && icontains(last_component(d), "loader")) return true;
        for (auto& o : pm.origins(m, e))
          if (o == "torch.utils.data.DataLoader" || o == "torch.utils.data.dataloader.DataLoader" || icontains(last_component(o), "loader"))
            return true;
        // a name bound to a wrapper around a loader: `pbar = tqdm(val_loader)`, `it = iter(loader)`
        if (t.is(e, K::Identifier))
          if (auto* bs = pm.bindings_of(m, e); bs && !bs->empty()) {
            bool all = true;
            for (auto& b : *bs)
              if (!(b.kind == Binding::Kind::Assign && b.whole && b.value != kNone && t.is(b.value, K::Call) &&
                    is_loader_wrapper(m, b.value) && is_loader_expr(m, b.value, depth + 1)))
                all = false;
            if (all) return true;
            // one loader out of a list of them: `for dl in val_loaders: for batch in dl:`
            all = true;
            for (auto& b : *bs)
              if (!(b.kind == Binding::Kind::ForTarget && b.stmt != kNone && t.is(b.stmt, K::ForStatement) &&
                    iterates_loaders(m, b.stmt) && is_loader_expr(m, t.field(b.stmt, F::Right), depth + 1)))
                all = false;
            if (all) return true;
          }
        // a parameter (`def evaluate(model, valid_dl)`): is every caller passing a loader?
        if (t.is(e, K::Identifier) && depth < 3)
          if (auto* bs = pm.bindings_of(m, e); bs && bs->size() == 1 && (*bs)[0].kind == Binding::Kind::Param)
            if (Function* f = m.enclosing_function(e)) {
              size_t idx = 0;
              while (idx < f->params.size() && f->params[idx] != t.text(e)) ++idx;
              const auto& callers = pm.callers_of(f);
              if (idx == f->params.size() || callers.empty()) return false;
              for (const Call* c : callers) {
                NodeId arg = pm.keyword_arg(*c->mod, *c, t.text(e));
                size_t offset = ProgramModel::implicit_args(*c, *f);
                if (arg == kNone && idx >= offset) arg = pm.positional_arg(*c->mod, *c, idx - offset);
                if (arg == kNone || !is_loader_expr(*c->mod, arg, depth + 1)) return false;
              }
              return true;
            }
        return false;
      }
      case K::Subscript: return is_loader_expr(m, t.field(e, F::Value), depth + 1);
      case K::ParenthesizedExpression: return is_loader_expr(m, t.first_named_child(e), depth + 1);
      case K::Call: {
        const Call* c = m.call_at(e);
        if (!c) return false;
        if (is_loader_wrapper(m, e)) {
          NodeId args = t.field(e, F::Arguments);
          if (args != kNone)
            for (NodeId a : t.named_child_range(args))
              if (!t.is(a, K::KeywordArgument) && is_loader_expr(m, a, depth + 1)) return true;
          return false;
        }
        std::string d = dotted_text(t, c->callee);
        if (!d.empty() && icontains(last_component(d), "loader")) return true;
        // a wrapper that takes the loader: metric_logger.log_every(data_loader, ...),
        // prefetcher(loader), accelerator.prepare(loader)...
        NodeId a0 = pm.positional_arg(m, *c, 0);
        return a0 != kNone && !t.is(a0, K::Call) && is_loader_expr(m, a0, depth + 1);
      }
      default: return false;
    }
  }

  // A loop whose elements are loaders, not batches (`for loader in val_loaders:`, `for i, dl in
  // enumerate(self.dataloaders):`): each iteration runs a whole pass over one loader, so the loop
  // is not a data loop, though its iterable's name contains `loader`. Told by the loop's target
  // (a name in it contains `loader`) or by the iterable (a plural `...loaders` name, also inside
  // enumerate / iter / tqdm). `loaders[k]` is one loader and stays a data loop.
  static bool names_loaders(const Tree& t, NodeId e) {
    if (e == kNone || !(t.is(e, K::Identifier) || t.is(e, K::Attribute))) return false;
    std::string d = dotted_text(t, e);
    std::string_view last = last_component(d);
    return last.size() >= 7 && icontains(last.substr(last.size() - 7), "loaders");
  }
  bool iterates_loaders(const Module& m, NodeId for_stmt) const {
    const Tree& t = m.tree;
    NodeId left = t.field(for_stmt, F::Left), right = t.field(for_stmt, F::Right);
    if (left != kNone)
      for (NodeId n = left; n < t[left].subtree_end; ++n)
        if (t.is(n, K::Identifier) && icontains(t.text(n), "loader")) return true;
    for (int depth = 0; right != kNone && depth < 4; ++depth) {
      if (names_loaders(t, right)) return true;
      if (!t.is(right, K::Call) || !is_loader_wrapper(m, right)) break;
      const Call* c = m.call_at(right);
      if (!c || c->qname == "builtins.zip") break;
      right = pm.positional_arg(m, *c, 0);
    }
    return false;
  }

  // ---- phase 2 -------------------------------------------------------------------------
  void index_modules() {
    for (auto& mp : pm.modules_) {
      Module& m = *mp;
      pm.by_dotted_["@path:" + std::filesystem::path(m.key).lexically_normal().generic_string()].push_back(&m);
    }
    for (auto& mp : pm.modules_) {
      Module& m = *mp;
      m.inner_names = pm.inner_names_of(m);
      std::filesystem::path p = std::filesystem::path(m.name_path).lexically_normal();
      std::vector<std::string> comps;
      for (auto& c : p) comps.push_back(c.string());
      if (comps.empty()) continue;
      std::string last = comps.back();
      if (last.size() > 3 && last.substr(last.size() - 3) == ".py") last.resize(last.size() - 3);
      comps.back() = last;
      if (last == "__init__") comps.pop_back();
      // every dotted suffix (up to 6 components) names this module
      std::string name;
      for (size_t k = 0; k < comps.size() && k < 6; ++k) {
        const std::string& c = comps[comps.size() - 1 - k];
        if (c.empty() || c == "." || c == ".." || c == "/" || c.find('-') != std::string::npos) break;
        name = name.empty() ? c : c + "." + name;
        pm.by_dotted_[name].push_back(&m);
        m.dotted = name;
      }
    }
    // Prefer, for each dotted name, the module with the shortest path (a top-level module).
    for (auto& [k, v] : pm.by_dotted_)
      std::stable_sort(v.begin(), v.end(), [](Module* a, Module* b) { return a->name_path.size() < b->name_path.size(); });
  }

  // ---- phase 3 -------------------------------------------------------------------------
  void resolve_module(Module& m) {
    for (auto& [base, node] : m.star_import_names) {
      std::string rest;
      Module* sm = nullptr;
      if (!base.empty() && base[0] == '.') {
        sm = pm.relative_module(m, base, &rest);
        if (!rest.empty()) sm = nullptr;
      } else {
        sm = pm.module_for(base, &rest, &m);
        if (!rest.empty()) sm = nullptr;
      }
      if (sm && sm != &m) m.star_imports.emplace_back(sm, node);
    }
    for (uint32_t i = 0; i < m.calls.size(); ++i)
      if (resolve_call_may_change(m, m.calls[i])) param_pending[m.index].push_back(i);
    for (auto& cp : m.classes) {
      Class& cl = *cp;
      for (NodeId b : cl.base_exprs) {
        auto r = pm.resolve(m, b, pm.scope_at(m, cl.def), 0);
        using RK = ProgramModel::Resolved::Kind;
        if (r.kind == RK::External) cl.bases.push_back(r.qname);
        else if (r.kind == RK::Class) cl.local_bases.push_back(r.cls);
      }
    }
    for (auto& fp : m.functions)
      for (NodeId d : fp->decorator_exprs) {
        NodeId e = d;
        if (m.tree.is(e, K::Call)) e = m.tree.field(e, F::Function);
        fp->decorators.push_back(pm.qualified_name(m, e));
      }
  }

  // resolve_call, and whether a parameter instance found later may change its answer: still
  // unresolved, and its resolution met a parameter (resolve_param_instances re-resolves those).
  bool resolve_call_may_change(Module& m, Call& c) {
    uint64_t before = ProgramModel::param_lookups();
    resolve_call(m, c);
    return !c.target && c.qname.empty() && ProgramModel::param_lookups() != before;
  }

  void resolve_call(Module& m, Call& c) {
    {
      if (c.callee == kNone) return;
      auto r = pm.resolve(m, c.callee, pm.scope_at(m, c.callee), 0);
      using RK = ProgramModel::Resolved::Kind;
      switch (r.kind) {
        case RK::External: c.qname = m.call_qnames.intern(r.qname); break;
        case RK::Function: c.target = r.fn; break;
        case RK::Class:
          c.target_class = r.cls;
          c.target = r.cls->find_method("__init__");
          c.implicit_self = true;
          break;
        case RK::Instance: {
          // calling an instance runs its class's `__call__`; nn.Module's own `__call__` runs forward
          Function* f = r.cls->find_method("__call__");
          if (!f) f = r.cls->find_method("forward");
          c.target = f;
          c.implicit_self = f != nullptr;
          break;
        }
        default: break;
      }
    }
  }

  // What judge_params found for one function.
  struct Judgement {
    std::vector<std::pair<std::string_view, Class*>> found;  // parameter -> the class every caller passes
    bool met_param = false;  // judging it met a parameter binding: judge it again next round
  };

  // docs/concepts.md "Calls through module instances", through parameters: `train(model, criterion,
  // loss_scaler)` called only as `train(m, LabelSmoothing(), NativeScaler())` makes
  // `criterion(...)` and `loss_scaler(...)` inside it calls of those classes. A parameter counts
  // only when it is never rebound and every analysed caller passes an instance of the same class;
  // a few rounds follow instances handed down through several functions.
  void resolve_param_instances() {
    // Each round judges the functions whose answer may have changed since the last: all at first,
    // then those that gained a caller and those whose judgement met a parameter (whose instance
    // may now be known). Likewise it re-resolves only the unresolved calls whose resolution met a
    // parameter (`param_pending`, filled by resolve_module): the others cannot change. Both give
    // what judging every function and re-resolving every call would.
    // A round's judgements read the model and param_instances_ as the last round left them, and a
    // call's resolution writes only that call: both run on the threads, each writing its own slot,
    // and what they found is merged in function and module order.
    std::vector<std::vector<const Call*>> callers(pm.functions_.size());
    for (auto& mp : pm.modules_)
      for (auto& c : mp->calls)
        if (c.target) callers[c.target->id].push_back(&c);
    std::vector<char> judge(pm.functions_.size(), 1);
    std::vector<Function*> judged;
    std::vector<Judgement> judgements;
    std::vector<std::vector<Call*>> resolved(pm.modules_.size());  // per module: calls that gained a target
    for (int round = 0; round < 4; ++round) {
      judged.clear();
      for (Function* f : pm.functions_)
        if (judge[f->id]) {
          judge[f->id] = 0;
          judged.push_back(f);
        }
      judgements.assign(judged.size(), Judgement{});
      parallel_for(judged.size(), threads, [&](size_t k) { judgements[k] = judge_params(*judged[k], callers); });
      bool any = false;
      for (size_t k = 0; k < judged.size(); ++k) {
        if (judgements[k].met_param) judge[judged[k]->id] = 1;
        for (auto& [p, cls] : judgements[k].found) {
          pm.param_instances_[judged[k]][p] = cls;
          any = true;
        }
      }
      if (!any) return;
      // calls that only now resolve: `criterion(...)`, `loss_scaler(...)`, `trainer.fit()`
      parallel_for(pm.modules_.size(), threads, [&](size_t mi) {
        Module& m = *pm.modules_[mi];
        std::vector<uint32_t>& pending = param_pending[m.index];
        resolved[mi].clear();
        size_t keep = 0;
        for (uint32_t i : pending) {
          Call& c = m.calls[i];
          if (resolve_call_may_change(m, c)) pending[keep++] = i;
          if (c.target) resolved[mi].push_back(&c);
        }
        pending.resize(keep);
      });
      for (auto& calls : resolved)
        for (Call* c : calls) {
          callers[c->target->id].push_back(c);
          judge[c->target->id] = 1;
        }
    }
  }

  // The parameters of `f` that every analysed caller fills with an instance of one analysed class
  // (none when it has no callers or more than 16), leaving out those already known.
  Judgement judge_params(const Function& f, const std::vector<std::vector<const Call*>>& callers) const {
    Judgement out;
    const auto& cs = callers[f.id];
    if (cs.empty() || cs.size() > 16) return out;
    uint64_t before = ProgramModel::param_lookups();
    auto known = pm.param_instances_.find(&f);
    for (size_t pi = 0; pi < f.params.size(); ++pi) {
      std::string_view p = f.params[pi];
      if (known != pm.param_instances_.end() && known->second.count(p)) continue;
      auto* bs = f.scope.find_local(p);
      if (!bs || bs->size() != 1 || (*bs)[0].kind != Binding::Kind::Param) continue;
      Class* cls = nullptr;
      bool ok = true;
      for (const Call* c : cs) {
        const Module& cm = *c->mod;
        NodeId arg = pm.keyword_arg(cm, *c, p);
        if (arg == kNone) {
          size_t off = ProgramModel::implicit_args(*c, f);
          if (pi < off || pm.has_splat(cm, *c)) { ok = false; break; }
          arg = pm.positional_arg(cm, *c, pi - off);
        }
        if (arg == kNone) { ok = false; break; }
        auto r = pm.resolve(cm, arg, pm.scope_at(cm, arg), 0);
        if (r.kind != ProgramModel::Resolved::Kind::Instance || (cls && cls != r.cls)) { ok = false; break; }
        cls = r.cls;
      }
      if (ok && cls) out.found.emplace_back(p, cls);
    }
    out.met_param = ProgramModel::param_lookups() != before;
    return out;
  }

  // ---- phase 4 -------------------------------------------------------------------------
  void link_imports() {
    // each module's own list, from names looked up in the finished index (relative_module's memo
    // takes its own locks)
    parallel_for(pm.modules_.size(), threads, [&](size_t mi) {
      Module& m = *pm.modules_[mi];
      std::unordered_set<Module*> seen;
      for (auto& q : m.imported_modules) {
        Module* t = nullptr;
        std::string rest;
        if (!q.empty() && q[0] == '.') t = pm.relative_module(m, q, &rest);
        else t = pm.module_for(q, &rest, &m);
        if (t && t != &m && seen.insert(t).second) m.imports.push_back(t);
      }
    });
  }

  void build_programs() {
    // A test module is never an entry script (docs/concepts.md "Test modules"), and what only tests
    // import is not thereby a library of some program.
    const size_t n = pm.modules_.size();
    std::vector<char> imported(n, 0);
    for (auto& mp : pm.modules_)
      if (!mp->is_test)
        for (Module* t : mp->imports) imported[t->index] = 1;
    // the members of each entry's import closure, breadth first; `seen` holds the id + 1 of the
    // program that last met each module (no set to clear per program)
    std::vector<uint32_t> seen(n, 0);
    for (auto& mp : pm.modules_) {
      Module& m = *mp;
      if (m.is_test || !(m.has_main_guard || !imported[m.index])) continue;
      m.is_entry = true;
      Program p;
      p.id = static_cast<uint32_t>(pm.programs_.size());
      p.entry = &m;
      const uint32_t stamp = p.id + 1;
      seen[m.index] = stamp;
      p.members.push_back(&m);
      for (size_t head = 0; head < p.members.size(); ++head)
        for (Module* t : p.members[head]->imports)
          if (seen[t->index] != stamp) {
            seen[t->index] = stamp;
            p.members.push_back(t);
          }
      for (Module* x : p.members) x->programs.push_back(p.id);
      pm.programs_.push_back(std::move(p));
    }
    // A module in an import cycle that nothing outside imports still belongs somewhere.
    for (auto& mp : pm.modules_)
      if (mp->programs.empty() && !mp->is_test) {
        Program p;
        p.id = static_cast<uint32_t>(pm.programs_.size());
        p.entry = mp.get();
        p.members.push_back(mp.get());
        mp->programs.push_back(p.id);
        pm.programs_.push_back(std::move(p));
      }
  }

  // Does expression v read any name in `names` (identifiers, or the last part of an attribute)?
  static bool reads_name_in(const Tree& t, NodeId v, const NameSet& names) {
    if (v == kNone || names.empty()) return false;
    thread_local std::vector<NodeId> stack;  // reused, as in mentions_accelerator()
    stack.assign(1, v);
    int budget = 2000;
    while (!stack.empty() && budget-- > 0) {
      NodeId x = stack.back();
      stack.pop_back();
      if (t.is(x, K::Identifier) && names.count(t.text(x))) return true;
      if (t.is(x, K::Attribute)) {
        // self.device / args.device; not the function name of a call such as torch.device(...)
        NodeId p = t.parent(x);
        bool callee = p != kNone && t.is(p, K::Call) && t.field(p, F::Function) == x;
        NodeId a = t.field(x, F::Attribute);
        if (!callee && a != kNone && names.count(t.text(a))) return true;
        NodeId o = t.field(x, F::Object);  // the attribute's own name is not a read of that name
        if (o != kNone) stack.push_back(o);
        continue;
      }
      for (NodeId c = t.first_child(x); c != kNone; c = t.next_sibling(c))
        if (t[c].named) stack.push_back(c);
    }
    return false;
  }

  // Does a `from_pretrained(device_map=...)` value place the model on an accelerator (possibly)?
  bool device_map_on_accelerator(const Module& m, NodeId dm, const NameSet& accel_names) const {
    const Tree& t = m.tree;
    if (mentions_accelerator(t, dm)) return true;
    if (t.is(dm, K::Dictionary)) {
      for (NodeId p : t.named_child_range(dm)) {
        if (!t.is(p, K::Pair)) continue;
        NodeId v = t.field(p, F::Value);
        if (v == kNone) continue;
        if (t.is(v, K::Integer) || mentions_accelerator(t, v)) return true;
        std::string d = dotted_text(t, v);
        if (!d.empty() && accel_names.count(last_component(d))) return true;
      }
      return false;
    }
    std::string d = dotted_text(t, dm);
    if (!d.empty() && t.is(dm, K::Identifier) && accel_names.count(d)) return true;
    ValueSet vs = pm.eval(m, dm);
    for (auto& l : vs.values) {
      if (l.kind == Literal::Kind::Int) return true;
      if (l.kind == Literal::Kind::Str &&
          (l.text == "auto" || l.text == "balanced" || l.text == "balanced_low_0" || l.text == "sequential" ||
           l.text.find("cuda") != std::string::npos))
        return true;
    }
    return false;
  }

  // Names bound to a possibly-accelerator device, per module, to a fixpoint: `acc =
  // torch.accelerator.current_accelerator()` then `device = torch.device(f"{acc}:0")` makes both
  // accelerator names. Functions whose return value is such a device count too (`dist_util.dev()`).
  void accelerator_facts() {
    std::vector<NameSet> names(pm.modules_.size());
    std::vector<std::vector<const Function*>> device_fns_of(pm.modules_.size());
    parallel_for(pm.modules_.size(), threads, [&](size_t mi) {  // each module's own names
      Module& m = *pm.modules_[mi];
      auto& ns = names[m.index];
      for (std::string_view dn : ProgramModel::kDefaultDeviceNames) ns.insert_copy(dn);
      // A name already in the set is skipped: inserting it again changes nothing. So after the
      // first round, whose values that mention an accelerator have put their names in, only
      // reads_name_in() can add one (mentions_accelerator() of the rest is still false).
      for (int round = 0; round < 4; ++round) {
        size_t before = ns.size();
        auto adds = [&](NodeId v) {
          return (round == 0 && mentions_accelerator(m.tree, v)) || reads_name_in(m.tree, v, ns);
        };
        auto scan_scope = [&](const Scope& s) {
          for (auto& [n, bs] : s.names) {
            if (ns.count(n)) continue;
            for (auto& b : bs)
              if (b.kind == Binding::Kind::Assign && b.value != kNone && adds(b.value)) {
                ns.insert_copy(n);
                break;
              }
          }
        };
        scan_scope(m.scope);
        for (auto& f : m.functions) scan_scope(f->scope);
        for (auto& c : m.classes)
          for (auto& [a, vs] : c->attr_values) {
            if (ns.count(a)) continue;
            for (NodeId v : vs)
              if (adds(v)) {
                ns.insert_copy(a);
                break;
              }
          }
        if (round == 0)
          for (auto& d : m.argdefs)
            if (d.has_default && mentions_accelerator(m.tree, d.default_value)) ns.insert_copy(d.dest);
        if (ns.size() == before) break;
      }
      // functions returning a device
      // (its own return statements: the named nodes of its body, in id order, a nested function,
      // class or lambda and an anonymous token skipped whole; ids are pre-order, so a subtree is
      // skipped by a jump to its end, and the walk reads the nodes in the order they lie in memory)
      const Tree& t = m.tree;
      for (auto& f : m.functions) {
        if (f->body == kNone) continue;
        for (NodeId x = f->body, end = t[f->body].subtree_end; x < end;) {
          const auto& nd = t[x];
          if ((x != f->body && !nd.named) || nd.kind == K::FunctionDefinition || nd.kind == K::ClassDefinition ||
              nd.kind == K::Lambda) {
            x = nd.subtree_end;
            continue;
          }
          if (nd.kind == K::ReturnStatement) {
            NodeId v = t.first_named_child(x);
            if (v != kNone && (mentions_accelerator(t, v) || reads_name_in(t, v, ns))) device_fns_of[mi].push_back(f.get());
            x = nd.subtree_end;
            continue;
          }
          ++x;
        }
      }
    });
    std::unordered_set<const Function*> device_fns;
    for (auto& v : device_fns_of) device_fns.insert(v.begin(), v.end());
    // A module of Lightning's own packages ("src.lightning.pytorch.trainer.trainer" in its repository).
    auto in_lightning_package = [](std::string_view dotted) {
      while (!dotted.empty()) {
        size_t dot = dotted.find('.');
        std::string_view part = dotted.substr(0, dot);
        if (part == "lightning" || part == "pytorch_lightning") return true;
        if (dot == std::string_view::npos) break;
        dotted.remove_prefix(dot + 1);
      }
      return false;
    };
    // Per module, once: the sites of direct facts, and the device names its `.to(x)` / `device=x`
    // use; a program counts only the sites it runs (docs/concepts.md "Program").
    struct ModuleFacts {
      std::vector<NodeId> opt, backward, accel;
      std::vector<const Class*> lightning;
      // Lightning trainers pinned to the CPU (`Trainer(accelerator="cpu")`, a LightningCLI's
      // `trainer_defaults={"accelerator": "cpu"}`), and trainers built for any other accelerator
      std::vector<NodeId> lightning_cpu, lightning_other;
      // a training framework's trainer built from a library outside the analysis (coqui's
      // `Trainer(...)`, transformers' `Trainer`/`SFTTrainer`, mmengine's `Runner`, Ignite's
      // engines): it runs the backward pass and the optimizer step itself
      std::vector<NodeId> trainers;
      std::vector<std::tuple<NodeId, std::string, NodeId>> used_device_names;  // site, name, device expression
    };
    std::vector<ModuleFacts> facts(pm.modules_.size());
    parallel_for(pm.modules_.size(), threads, [&](size_t mi) {  // each module's own sites
      const Module& m = *pm.modules_[mi];
      const Tree& t = m.tree;
      ModuleFacts& mf = facts[m.index];
      // A LightningModule is placed by Lightning's Trainer (accelerator="auto" picks the GPU)
      // unless the program pins it to the CPU.
      for (auto& cl : m.classes)
        if (ProgramModel::is_nn_module_class(*cl))
          for (auto& b : cl->bases)
            if ((b.rfind("pytorch_lightning", 0) == 0 || b.rfind("lightning", 0) == 0) &&
                last_component(b) == "LightningModule")
              mf.lightning.push_back(cl.get());
      // trainer_defaults={"accelerator": "cpu"} (LightningCLI) pins the CPU too
      for (NodeId n = 0; n < t.size(); ++n)
        if (t.is(n, K::Pair)) {
          NodeId k = t.field(n, F::Key), v = t.field(n, F::Value);
          if (string_literal_value(t, k) == "accelerator" && string_literal_value(t, v) == "cpu") mf.lightning_cpu.push_back(n);
        }
      for (auto& c : m.calls) {
        // Lightning's Trainer, installed or analysed (linting Lightning's own repository)
        bool lightning_trainer =
            c.target_class ? c.target_class->name == "Trainer" && in_lightning_package(c.target_class->mod->dotted)
                           : (c.qname.rfind("pytorch_lightning", 0) == 0 || c.qname.rfind("lightning", 0) == 0) &&
                                 last_component(c.qname) == "Trainer";
        if (lightning_trainer) {
          NodeId acc = pm.keyword_arg(m, c, "accelerator");
          if (acc != kNone && string_literal_value(t, acc) == "cpu") mf.lightning_cpu.push_back(c.node);
          else if (acc != kNone || !pm.has_splat(m, c)) mf.lightning_other.push_back(c.node);
        }
        if (is_opt_step(m, c)) mf.opt.push_back(c.node);
        if (is_backward(c)) mf.backward.push_back(c.node);
        if (!c.target_class && !c.target && !c.qname.empty() && !c.qname.starts_with("builtins.")) {
          std::string_view leaf = last_component(c.qname);
          if (leaf.ends_with("Trainer") || leaf == "Runner" || c.qname.ends_with("Runner.from_cfg") ||
              c.qname == "ignite.engine.Engine" || c.qname == "ignite.engine.create_supervised_trainer" ||
              c.qname == "ignite.engine.engine.Engine")
            mf.trainers.push_back(c.node);
        }
        // A class's own `def cuda(self)` (a spec, a container, a wrapper: `return self.to("cuda")`)
        // runs only where code calls `.cuda()` on such an object, and that call is a site of its
        // own; a program that uses the class without it places nothing there.
        if (c.fn && c.fn->cls && c.fn->name == "cuda") continue;
        // a Hugging Face model loaded with a device_map that may be CUDA ("cuda", "auto", a GPU
        // index, {"": local_rank})
        if (c.method == "from_pretrained" || last_component(c.qname) == "from_pretrained")
          if (NodeId dm = pm.keyword_arg(m, c, "device_map"); dm != kNone && device_map_on_accelerator(m, dm, names[m.index])) {
            mf.accel.push_back(c.node);
            continue;
          }
        std::string_view q = c.qname;
        if (q == "torch.cuda.set_device" || q.rfind("accelerate.Accelerator", 0) == 0 ||
            q == "lightning.fabric.Fabric" || q == "lightning.Fabric" || q == "lightning_fabric.Fabric" ||
            (c.method == "cuda" && c.receiver != kNone)) {
          mf.accel.push_back(c.node);
          continue;
        }
        NodeId dev = kNone;
        if (c.method == "to" && c.receiver != kNone) dev = pm.positional_arg(m, c, 0);
        NodeId kwdev = pm.keyword_arg(m, c, "device");
        for (NodeId d : {dev, kwdev}) {
          if (d == kNone) continue;
          if (mentions_accelerator(t, d)) mf.accel.push_back(c.node);
          std::string dt = dotted_text(t, d);
          // `device=x.device` follows x: it places nothing that x's own placement did not
          bool follows_value = false;
          if (t.is(d, K::Attribute))
            if (NodeId obj = t.field(d, F::Object); obj != kNone && t.is(obj, K::Identifier) && !config_like_name(t.text(obj)))
              follows_value = true;
          if (!dt.empty() && !follows_value) mf.used_device_names.emplace_back(c.node, std::string(last_component(dt)), d);
          if (t.is(d, K::Call))
            if (const Call* dc = m.call_at(d); dc && dc->target && device_fns.count(dc->target))
              mf.accel.push_back(c.node);
        }
      }
    });
    // Per program: a name used as a device in one member and bound to an accelerator in another.
    pm.device_fns_ = device_fns;
    pm.accel_name_modules_.clear();
    for (auto& mp : pm.modules_)
      for (std::string_view n : names[mp->index])
        if (std::find(ProgramModel::kDefaultDeviceNames.begin(), ProgramModel::kDefaultDeviceNames.end(), n) ==
            ProgramModel::kDefaultDeviceNames.end())
          pm.accel_name_modules_[std::string(n)].push_back(mp->index);
    pm.accel_names_ready_ = true;
    // each program's own facts, on the run's threads (a program writes only its own fields)
    parallel_for(pm.programs_.size(), threads, [&](size_t pi) {
      Program& p = pm.programs_[pi];
      bool accel = false;
      bool lightning = false, lightning_cpu = false, lightning_other = false;
      auto any_runs = [&](const Module& m, const std::vector<NodeId>& sites, bool accel_sites = false) {
        for (NodeId n : sites)
          if (pm.runs_in_program(p, m, n)) {
            if (accel_sites && !p.accel_mod) {
              p.accel_mod = &m;
              p.accel_node = n;
            }
            return true;
          }
        return false;
      };
      for (Module* m : p.members) {
        const ModuleFacts& mf = facts[m->index];
        p.has_opt_step |= any_runs(*m, mf.opt);
        p.has_backward |= any_runs(*m, mf.backward);
        accel = accel || any_runs(*m, mf.accel, true);
        for (const Class* cl : mf.lightning)
          if (p.reaches_class(cl) && !lightning) {
            lightning = true;
            if (!p.accel_mod) {
              p.accel_mod = m;
              p.accel_node = cl->def;
            }
          }
        lightning_cpu = lightning_cpu || any_runs(*m, mf.lightning_cpu);
        lightning_other = lightning_other || any_runs(*m, mf.lightning_other);
      }
      // Every Lightning trainer the program builds is pinned to the CPU: Lightning places the
      // model and the batches there, and the device code of its modules (`if device != "cpu":
      // x = x.cuda(device)`, the library's own `.cuda()`) follows the trainer's device.
      bool pinned_cpu = lightning_cpu && !lightning_other;
      if (lightning && !pinned_cpu) accel = true;
      for (Module* m : p.members) {
        if (accel) break;
        for (auto& [site, used, expr] : facts[m->index].used_device_names) {
          if (!pm.runs_in_program(p, *m, site)) continue;
          // followed to its values where the program shows them; by name otherwise
          int known = device_on_accelerator(pm, p, *m, expr);
          if (known == 0) continue;
          if (known == 1) {
            accel = true;
            p.accel_mod = m;
            p.accel_node = site;
            break;
          }
          for (Module* n : p.members)
            if (names[n->index].count(used)) {
              accel = true;
              p.accel_mod = m;
              p.accel_node = site;
              break;
            }
          if (accel) break;
        }
      }
      if (pinned_cpu) accel = false;
      p.uses_accelerator = accel;
      p.trains = p.has_opt_step || p.has_backward || lightning;
      for (Module* m : p.members)
        if (!p.trains) p.trains = any_runs(*m, facts[m->index].trainers);
      if (!accel) {
        p.accel_mod = nullptr;
        p.accel_node = kNone;
      }
    });
  }

  // Call sites of each analysed function, once every call is resolved.
  void link_callers() {
    pm.callers_.assign(pm.functions_.size(), {});
    for (auto& mp : pm.modules_)
      for (auto& c : mp->calls)
        if (c.target) pm.callers_[c.target->id].push_back(&c);
  }

  void call_graph_facts() {
    // direct facts
    std::vector<std::vector<Function*>> callers(pm.functions_.size());
    std::deque<Function*> work_opt, work_back;
    // which calls are optimizer steps, per module on the run's threads (each asks the call's
    // origins), for the functions' facts here and the loops' below; the queues are filled in
    // module and call order as before
    std::vector<std::vector<char>> opt_call(pm.modules_.size());
    parallel_for(pm.modules_.size(), threads, [&](size_t mi) {
      const Module& m = *pm.modules_[mi];
      auto& v = opt_call[mi];
      v.resize(m.calls.size());
      for (size_t ci = 0; ci < m.calls.size(); ++ci) v[ci] = is_opt_step(m, m.calls[ci]);
    });
    for (auto& mp : pm.modules_) {
      Module& m = *mp;
      const auto& opt = opt_call[m.index];
      for (size_t ci = 0; ci < m.calls.size(); ++ci) {
        Call& c = m.calls[ci];
        if (c.fn && c.target) callers[c.target->id].push_back(c.fn);
        if (!c.fn) continue;
        if (!c.fn->reaches_opt_step && opt[ci]) {
          c.fn->reaches_opt_step = true;
          work_opt.push_back(c.fn);
        }
        if (!c.fn->reaches_backward && is_backward(c)) {
          c.fn->reaches_backward = true;
          work_back.push_back(c.fn);
        }
      }
    }
    auto propagate = [&](std::deque<Function*>& work, bool Function::*flag) {
      while (!work.empty()) {
        Function* f = work.front();
        work.pop_front();
        for (Function* caller : callers[f->id])
          if (!(caller->*flag)) {
            caller->*flag = true;
            work.push_back(caller);
          }
      }
    };
    propagate(work_opt, &Function::reaches_opt_step);
    propagate(work_back, &Function::reaches_backward);

    // loops: direct calls or calls into functions that reach; whether a loop iterates a loader.
    // Per module on the run's threads: a module writes only its own loops.
    parallel_for(pm.modules_.size(), threads, [&](size_t mi) {
      Module& m = *pm.modules_[mi];
      for (auto& L : m.loops) {
        for (uint32_t ci : L.calls) {
          const Call& c = m.calls[ci];
          if (opt_call[mi][ci] || (c.target && c.target->reaches_opt_step)) L.reaches_opt_step = true;
          if (is_backward(c) || (c.target && c.target->reaches_backward)) L.reaches_backward = true;
        }
        NodeId it = m.tree.is(L.node, K::ForStatement) ? m.tree.field(L.node, F::Right) : kNone;
        L.data_loop = it != kNone && is_loader_expr(m, it) && !iterates_loaders(m, L.node);
      }
    });

    // classification, per module; "has an optimizer step" is per program
    std::vector<std::vector<char>> candidate(pm.modules_.size());
    std::vector<char> fn_has_train_data_loop(pm.functions_.size(), 0), fn_has_candidate(pm.functions_.size(), 0);
    for (auto& mp : pm.modules_) {
      Module& m = *mp;
      bool use_opt = false;
      for (uint32_t p : m.programs) use_opt |= pm.programs_[p].has_opt_step;
      auto& cand = candidate[m.index];
      cand.assign(m.loops.size(), 0);
      for (auto& L : m.loops) {
        // a test's loops run a few iterations by design: never step loops (docs/concepts.md "Test modules")
        // a loop whose body ends in an unconditional return/break runs once: not a step loop;
        // nor is one over a few values written out (one configuration each), nor one that runs
        // a handful of iterations written in the code (a smoke test's `for step in range(10):`)
        cand[L.index] = !m.is_test && !L.runs_once && !L.over_display && !few_iterations(m, L) &&
                        (use_opt ? L.reaches_opt_step : L.reaches_backward);
        if (cand[L.index] && L.fn) {
          fn_has_candidate[L.fn->id] = 1;
          if (L.data_loop) fn_has_train_data_loop[L.fn->id] = 1;
        }
      }
    }
    // transitive: a function that calls a function containing such loops
    auto close = [&](std::vector<char>& has) {
      std::deque<Function*> work;
      for (auto* f : pm.functions_)
        if (has[f->id]) work.push_back(f);
      while (!work.empty()) {
        Function* f = work.front();
        work.pop_front();
        for (Function* caller : callers[f->id])
          if (!has[caller->id]) {
            has[caller->id] = 1;
            work.push_back(caller);
          }
      }
    };
    close(fn_has_train_data_loop);
    close(fn_has_candidate);

    std::vector<int8_t> data_memo(pm.functions_.size(), -1);  // only_handles_data per function
    for (auto& mp : pm.modules_) {
      Module& m = *mp;
      auto& cand = candidate[m.index];
      // nested (lexical) candidate loops
      std::vector<char> nested_cand(m.loops.size(), 0), nested_data_cand(m.loops.size(), 0);
      for (auto& L : m.loops)
        if (cand[L.index])
          for (int32_t p = L.parent; p >= 0; p = m.loops[p].parent) {
            nested_cand[p] = 1;
            if (L.data_loop) nested_data_cand[p] = 1;
          }
      for (auto& L : m.loops) {
        if (!cand[L.index]) continue;
        bool via_calls_data = false;
        for (uint32_t ci : L.calls) {
          const Call& c = m.calls[ci];
          if (c.target && fn_has_train_data_loop[c.target->id]) via_calls_data = true;
        }
        if (L.data_loop && !nested_data_cand[L.index] && !via_calls_data) L.kind = LoopKind::TrainStep;
      }
      for (auto& L : m.loops) {
        if (L.kind != LoopKind::Other || !cand[L.index] || L.data_loop) continue;
        bool inside_train = false;
        for (int32_t p = L.parent; p >= 0; p = m.loops[p].parent)
          if (m.loops[p].kind == LoopKind::TrainStep && m.loops[p].data_loop) inside_train = true;
        if (inside_train) continue;
        bool via_calls_cand = false;
        for (uint32_t ci : L.calls) {
          const Call& c = m.calls[ci];
          if (c.target && fn_has_candidate[c.target->id]) via_calls_cand = true;
        }
        if (!nested_cand[L.index] && !via_calls_cand) L.kind = LoopKind::TrainStep;
      }
      for (auto& L : m.loops)
        if (L.kind == LoopKind::Other && L.data_loop && !L.reaches_backward && !m.is_test && !L.runs_once &&
            !L.over_display && !few_iterations(m, L) && !(only_handles_data(m, L.calls, data_memo, 0) && !yields(m.tree, L.node)))
          L.kind = LoopKind::EvalStep;
    }
    // epoch loops: contain a step loop lexically or through calls
    std::vector<char> fn_has_step(pm.functions_.size(), 0);
    for (auto& mp : pm.modules_)
      for (auto& L : mp->loops)
        if ((L.kind == LoopKind::TrainStep || L.kind == LoopKind::EvalStep) && L.fn) fn_has_step[L.fn->id] = 1;
    close(fn_has_step);
    for (auto* f : pm.functions_) f->reaches_step_loop = fn_has_step[f->id];
    for (auto& mp : pm.modules_) {
      Module& m = *mp;
      for (auto& L : m.loops) {
        if (L.kind != LoopKind::Other) continue;
        for (auto& Q : m.loops)
          if (&Q != &L && (Q.kind == LoopKind::TrainStep || Q.kind == LoopKind::EvalStep) && Q.fn == L.fn &&
              m.tree.contains(L.node, Q.node))
            L.contains_step_loop = true;
        for (uint32_t ci : L.calls) {
          const Call& c = m.calls[ci];
          if (c.target && fn_has_step[c.target->id]) L.contains_step_loop = true;
        }
        // a sweep over a few written-out values runs its training loop once per value: not epochs
        if (L.contains_step_loop && !L.over_display) L.kind = LoopKind::Epoch;
      }
    }
    // functions called (transitively) from inside an epoch loop
    pm.epoch_reached_.assign(pm.functions_.size(), 0);
    std::deque<Function*> ework;
    for (auto& mp : pm.modules_)
      for (auto& L : mp->loops)
        if (L.kind == LoopKind::Epoch)
          for (uint32_t ci : L.calls) {
            Function* t = mp->calls[ci].target;
            if (t && !pm.epoch_reached_[t->id]) {
              pm.epoch_reached_[t->id] = 1;
              ework.push_back(t);
            }
          }
    while (!ework.empty()) {
      Function* f = ework.front();
      ework.pop_front();
      for (uint32_t ci : f->calls) {
        Function* t = f->mod->calls[ci].target;
        if (t && !pm.epoch_reached_[t->id]) {
          pm.epoch_reached_[t->id] = 1;
          ework.push_back(t);
        }
      }
    }
  }

  void framework_hooks() {
    static const char* lightning_hooks[] = {"training_step", "validation_step", "test_step", "predict_step",
                                            "on_train_batch_start", "on_train_batch_end",
                                            "on_before_optimizer_step", "on_after_backward"};
    for (auto& mp : pm.modules_)
      for (auto& cp : mp->classes) {
        if (mp->is_test) continue;  // a test's hooks run a few steps by design
        Class& c = *cp;
        auto base_is = [&](std::initializer_list<std::string_view> roots, std::string_view leaf, auto& self, const Class& k, int d) -> bool {
          for (auto& b : k.bases) {
            bool root_ok = false;
            for (auto r : roots)
              if (b.rfind(r, 0) == 0) root_ok = true;
            if (root_ok && last_component(b) == leaf) return true;
          }
          if (d > 8) return false;
          for (Class* lb : k.local_bases)
            if (lb != &k && self(roots, leaf, self, *lb, d + 1)) return true;
          return false;
        };
        auto mark = [&](std::string_view meth, std::string desc) {
          auto it = c.methods.find(meth);
          if (it == c.methods.end()) return;
          it->second->is_step_hook = true;
          it->second->hook_desc = std::move(desc);
        };
        if (base_is({"pytorch_lightning", "lightning"}, "LightningModule", base_is, c, 0))
          for (auto* h : lightning_hooks) mark(h, "Lightning hook `" + std::string(h) + "` (runs every step)");
        if (base_is({"pytorch_lightning", "lightning"}, "Callback", base_is, c, 0)) {
          mark("on_train_batch_start", "Lightning callback `on_train_batch_start` (runs every step)");
          mark("on_train_batch_end", "Lightning callback `on_train_batch_end` (runs every step)");
        }
        if (base_is({"transformers"}, "Trainer", base_is, c, 0) || base_is({"transformers"}, "Seq2SeqTrainer", base_is, c, 0)) {
          mark("training_step", "transformers Trainer `training_step` (runs every step)");
          mark("compute_loss", "transformers Trainer `compute_loss` (runs every step)");
        }
        if (base_is({"transformers"}, "TrainerCallback", base_is, c, 0)) {
          mark("on_step_begin", "transformers callback `on_step_begin` (runs every step)");
          mark("on_step_end", "transformers callback `on_step_end` (runs every step)");
        }
      }
  }

  // Names that vary inside function f when it runs once per step: what it assigns, its class's
  // attributes set outside `__init__`, and the module globals that the functions it calls (two
  // calls deep) assign under a `global` statement (`if _STATE is None: initialize()`, where
  // `initialize` sets `_STATE` through a setter: the branch runs once, on the first call).
  static void function_varying(const Function& f, std::unordered_set<std::string>& out) {
    if (f.body != kNone) collect_assigned_names(f.mod->tree, f.body, out);
    const Function* g = &f;
    while (g && !g->cls) g = g->outer;
    if (g && g->cls)
      for (auto& a : g->cls->attrs_mutated_outside_init) out.insert("self." + std::string(a));
    globals_set_by_callees(f, out, 0);
  }
  static void globals_set_by_callees(const Function& f, std::unordered_set<std::string>& out, int depth) {
    if (depth >= 2) return;
    for (uint32_t ci : f.calls) {
      const Function* callee = f.mod->calls[ci].target;
      if (!callee || callee == &f || callee->body == kNone) continue;
      const Tree& t = callee->mod->tree;
      std::vector<std::string_view> declared;  // names of its `global` statements
      for (NodeId n = callee->body, end = t[callee->body].subtree_end; n < end; ++n)
        if (t.is(n, K::GlobalStatement))
          for (NodeId id : t.named_child_range(n))
            if (t.is(id, K::Identifier)) declared.push_back(t.text(id));
      if (!declared.empty()) {
        std::unordered_set<std::string> assigned;
        collect_assigned_names(t, callee->body, assigned);
        for (std::string_view d : declared)
          if (assigned.count(std::string(d))) out.insert(std::string(d));
      }
      globals_set_by_callees(*callee, out, depth + 1);
    }
  }

  // Adds `c` to the ways in of `r`; true when it is new.
  static bool add_entry(CallReach& r, const Call* c) {
    if (std::find(r.entries.begin(), r.entries.end(), c) != r.entries.end()) return false;
    r.entries.push_back(c);
    return true;
  }

  void add_reach(Function* f, std::unique_ptr<CallReach> r, std::deque<Function*>& work) {
    auto& v = pm.reach_[f->id];
    for (auto& e : v)
      if (e->root == r->root) {  // first (shortest) path wins; the ways in are kept
        bool grew = r->unconditional && !e->unconditional;
        e->unconditional |= r->unconditional;
        for (const Call* c : r->entries) grew |= add_entry(*e, c);
        if (grew && e->pruned) work.push_back(f);  // what the old ways in ruled out may run now
        return;
      }
    v.push_back(std::move(r));
    work.push_back(f);
  }

  // Varying parameters of `target` from the arguments of call c, judged in context g.
  std::unordered_set<std::string> varying_params(const GuardContext& g, const Call& c, const Function& target) {
    std::unordered_set<std::string> out;
    const Tree& t = g.mod->tree;
    NodeId args = t.field(c.node, F::Arguments);
    size_t offset = ProgramModel::implicit_args(c, target);
    if (args == kNone) return out;
    size_t i = 0;
    for (NodeId a : t.named_child_range(args)) {
      if (t.is(a, K::KeywordArgument)) {
        NodeId k = t.field(a, F::Name), v = t.field(a, F::Value);
        if (k != kNone && v != kNone && is_varying_expr(g, v)) out.insert(std::string(t.text(k)));
      } else if (t.is(a, K::ListSplat) || t.is(a, K::DictionarySplat)) {
        for (auto p : target.params) out.insert(std::string(p));
      } else {
        size_t pi = offset + i++;
        if (pi < target.params.size() && is_varying_expr(g, a)) out.insert(std::string(target.params[pi]));
        if (pi >= target.params.size())
          for (auto p : target.params) out.insert(std::string(p));  // *args: conservatively varying
      }
    }
    return out;
  }

  void data_path() {
    pm.data_path_.clear();
    pm.data_path_.resize(pm.functions_.size());
    std::deque<Function*> work;
    auto add_root = [&](Function* f, std::string desc) {
      if (!f || pm.data_path_[f->id]) return;
      auto d = std::make_unique<DataPathInfo>();
      d->root = f;
      d->desc = std::move(desc);
      pm.data_path_[f->id] = std::move(d);
      work.push_back(f);
    };
    for (auto& mp : pm.modules_) {
      Module& m = *mp;
      for (auto& cp : m.classes)
        if (is_dataset_class(*cp))
          for (const char* meth : {"__getitem__", "__getitems__", "__iter__", "__next__"})
            if (auto it = cp->methods.find(meth); it != cp->methods.end())
              add_root(it->second, "`" + std::string(meth) + "` of Dataset `" + std::string(cp->name) + "`");
      // a class whose instances are handed to a DataLoader is a dataset, whatever its bases
      for (auto& c : m.calls) {
        if (c.qname != "torch.utils.data.DataLoader" && c.qname != "torch.utils.data.dataloader.DataLoader") continue;
        NodeId ds = pm.loader_dataset(m, c);
        if (ds == kNone) continue;
        for (auto& o : pm.origins(m, ds)) {
          if (o.rfind("class:", 0) != 0) continue;
          std::string qual = o.substr(6);
          for (auto& mp2 : pm.modules_)
            for (auto& cl : mp2->classes)
              if (cl->qualname == qual && !is_dataset_class(*cl))
                for (const char* meth : {"__getitem__", "__iter__"})
                  if (auto it = cl->methods.find(meth); it != cl->methods.end())
                    add_root(it->second, "`" + std::string(meth) + "` of `" + std::string(cl->name) +
                                             "` (its instances are DataLoader datasets)");
        }
      }
      // functions handed to the pipeline: collate_fn=, transform=, loader=, ...
      const Tree& t = m.tree;
      for (auto& c : m.calls) {
        NodeId args = t.field(c.node, F::Arguments);
        if (args == kNone) continue;
        for (NodeId a : t.named_child_range(args)) {
          if (!t.is(a, K::KeywordArgument)) continue;
          NodeId k = t.field(a, F::Name), v = t.field(a, F::Value);
          if (k == kNone || v == kNone) continue;
          std::string_view kn = t.text(k);
          if (kn != "collate_fn" && kn != "transform" && kn != "target_transform" && kn != "transforms" &&
              kn != "loader" && kn != "worker_init_fn")
            continue;
          if (kn == "worker_init_fn") continue;
          std::string role = kn == "collate_fn" ? "collate function" : kn == "loader" ? "sample loader" : "transform";
          if (Function* f = pm.resolve_function(m, v)) add_root(f, "the " + role + " `" + std::string(f->name) + "`");
          // an instance or a class: its __call__
          if (t.is(v, K::Call)) {
            const Call* vc = m.call_at(v);
            if (vc && vc->target_class)
              if (Function* f = vc->target_class->find_method("__call__"))
                add_root(f, "the " + role + " `" + std::string(vc->target_class->name) + "`");
          }
        }
        // transforms.Compose([A(), B()]): each element's __call__
        if (last_component(c.qname) == "Compose") {
          std::vector<NodeId> stack{args};
          while (!stack.empty()) {
            NodeId x = stack.back();
            stack.pop_back();
            if (t.is(x, K::Call)) {
              const Call* vc = m.call_at(x);
              if (vc && vc->target_class)
                if (Function* f = vc->target_class->find_method("__call__"))
                  add_root(f, "the transform `" + std::string(vc->target_class->name) + "`");
              if (vc && vc->target_class) continue;
            }
            if (t.is(x, K::Lambda)) continue;
            if (t.is(x, K::Identifier) || t.is(x, K::Attribute)) {
              if (Function* f = pm.resolve_function(m, x)) add_root(f, "the transform `" + std::string(f->name) + "`");
              continue;
            }
            for (NodeId ch = t.first_child(x); ch != kNone; ch = t.next_sibling(ch))
              if (t[ch].named) stack.push_back(ch);
          }
        }
      }
    }
    while (!work.empty()) {
      Function* f = work.front();
      work.pop_front();
      const DataPathInfo& info = *pm.data_path_[f->id];
      if (info.chain.size() >= 8) continue;
      for (uint32_t ci : f->calls) {
        const Call& c = f->mod->calls[ci];
        if (!c.target || pm.data_path_[c.target->id]) continue;
        auto d = std::make_unique<DataPathInfo>();
        d->root = info.root;
        d->desc = info.desc;
        d->chain = info.chain;
        d->chain.push_back(&c);
        pm.data_path_[c.target->id] = std::move(d);
        work.push_back(c.target);
      }
    }
  }

  // `for step in range(k):` where k is an integer literal of at most 16, written there or bound
  // to a name that holds nothing else (`steps = 10`), and no loop around it (none in its function,
  // and no caller calls its function from a loop): a smoke test or a memory check that runs a
  // handful of steps. Never a step loop. Inside a loop it is the inner loop of a step (critic
  // iterations, the updates made per collected batch), and the catalog's rule stands: the
  // innermost loop with the optimizer step is the step loop.
  // Do `calls` (a loop's, or a function's) only move and show data: Python's builtins (`print`,
  // `len`, `enumerate`), numpy, the standard logger, tensor constructors and printing options, and
  // methods of tensors, containers and strings that compute nothing (`x.detach().cpu()`,
  // `batch["index"][i].item()`, `rows.append(...)`), or the program's functions that do only
  // that? A loop over a loader whose body does no more (a `--debug` dump of the first batches, a
  // dataset viewer, a check of the data) runs no model: it is not an evaluation step (unless it
  // yields the batches on: see yields()). A call of
  // anything else (a model, a loss, a metric, a `torch` op, a move to the device) keeps the loop
  // one.
  bool only_handles_data(const Module& m, const std::vector<uint32_t>& calls, std::vector<int8_t>& memo,
                         int depth) const {
    static const std::unordered_set<std::string_view> data_methods = {
        "detach", "cpu", "numpy", "tolist", "item", "size", "dim", "numel", "keys", "values", "items", "get",
        "append", "extend", "update", "pop", "format", "join", "split", "strip", "replace", "startswith",
        "endswith", "lower", "upper", "write", "flush", "close", "set_description", "set_postfix", "view",
        "reshape", "squeeze", "unsqueeze", "permute", "contiguous", "float", "long", "int", "half", "double",
        "type", "copy", "clone", "sort", "index", "count", "shape", "print", "info", "debug", "warning",
        "is_contiguous", "dtype", "flatten", "tobytes", "astype"};
    for (uint32_t ci : calls) {
      const Call& c = m.calls[ci];
      std::string_view q = c.qname;
      if (c.target) {
        const Function& f = *c.target;
        if (f.reaches_backward || f.reaches_opt_step || depth >= 3) return false;
        int8_t& known = memo[f.id];
        if (known < 0) {
          known = 0;  // a recursive call handles more than data (for now)
          bool data = only_handles_data(*f.mod, f.calls, memo, depth + 1);
          // a "no" found below the top may come from the depth limit or a recursion still open:
          // asked again, from the top, it is worked out afresh
          known = data ? 1 : depth == 0 ? 0 : -1;
          if (!data) return false;
        }
        if (known == 0) return false;
        continue;
      }
      if (c.target_class) return false;
      if (q.starts_with("builtins.") || q.starts_with("numpy.") || q.starts_with("logging.") ||
          q == "torch.set_printoptions" || q == "torch.tensor" || q == "torch.as_tensor" || q == "torch.from_numpy" ||
          q == "torch.IntTensor" || q == "torch.LongTensor" || q == "torch.FloatTensor" || q == "pprint.pprint")
        continue;
      if (!q.empty() || c.receiver == kNone) return false;
      if (!data_methods.count(c.method)) return false;
    }
    return true;
  }

  // A generator's loop that hands each batch on (`for data in dl: yield data`): its consumer's
  // steps run between its iterations.
  static bool yields(const Tree& t, NodeId loop) {
    for (NodeId x = loop; x < t[loop].subtree_end; ++x)
      if (t.kind(x) == K::Other && t.type_name(x) == "yield") return true;
    return false;
  }

  bool few_iterations(const Module& m, const Loop& L) const {
    const Tree& t = m.tree;
    if (!t.is(L.node, K::ForStatement) || L.parent >= 0) return false;
    if (L.fn)
      for (const Call* c : pm.callers_of(L.fn))
        if (c->loop >= 0) return false;
    NodeId it = t.field(L.node, F::Right);
    const Call* c = it != kNone && t.is(it, K::Call) ? m.call_at(it) : nullptr;
    auto small = [&](NodeId v) {
      if (v == kNone || !t.is(v, K::Integer)) return false;
      auto s = t.text(v);
      return s.size() <= 2 && std::stoi(std::string(s)) <= 16;
    };
    if (c && c->qname == "builtins.enumerate") {
      // `for i, batch in enumerate(loader): if i >= 5: break` (the first statement of the body)
      NodeId target = t.field(L.node, F::Left), body = t.field(L.node, F::Body);
      NodeId counter = target != kNone ? t.first_named_child(target) : kNone;
      NodeId first = body != kNone ? t.first_named_child(body) : kNone;
      if (counter != kNone && t.is(counter, K::Identifier) && first != kNone && t.is(first, K::IfStatement)) {
        NodeId cond = t.field(first, F::Condition), then = t.field(first, F::Consequence);
        auto kids = cond != kNone && t.is(cond, K::ComparisonOperator) ? t.named_children(cond) : std::vector<NodeId>{};
        std::string_view op = cond != kNone ? t.operator_text(cond) : std::string_view{};
        NodeId only = then != kNone && t.named_children(then).size() == 1 ? t.first_named_child(then) : kNone;
        if (kids.size() == 2 && t.is(kids[0], K::Identifier) && t.text(kids[0]) == t.text(counter) &&
            small(kids[1]) && (op == ">=" || op == ">" || op == "==") && only != kNone &&
            t.is(only, K::BreakStatement))
          return true;
      }
      // `enumerate(islice(loader, 5))`: the count is islice's
      if (NodeId a = pm.positional_arg(m, *c, 0); a != kNone && t.is(a, K::Call)) c = m.call_at(a);
    }
    // the first few items of anything (a look at a loader's first batches): `islice(loader, 5)`
    if (c && c->qname == "itertools.islice") {
      NodeId stop = pm.positional_arg(m, *c, 1);
      return small(stop) && pm.positional_arg(m, *c, 2) == kNone;
    }
    if (!c || c->qname != "builtins.range") return false;
    NodeId args = t.field(c->node, F::Arguments);
    if (args == kNone || t.named_children(args).size() != 1) return false;
    NodeId k = t.first_named_child(args);
    if (small(k)) return true;
    if (!t.is(k, K::Identifier)) return false;
    auto* bs = pm.bindings_of(m, k);
    if (!bs || bs->empty()) return false;
    for (auto& b : *bs)
      if (b.kind != Binding::Kind::Assign || !b.whole || !small(b.value)) return false;
    return true;
  }

  // Loop::evaluates_each_iteration: a training step loop that iterates no loader and, every
  // iteration (under no test at all, not even of configuration), calls an analysed function that
  // evaluates: one that reaches no backward pass and switches a model to eval mode or holds an
  // evaluation step loop, itself or through the functions it calls (3 levels). Running with gradients off is not enough:
  // an EMA update or an augmentation tuner is decorated `@torch.no_grad()` and runs every step of
  // an ordinary loop. Nor is a bare `policy.eval()` in the loop's body: it may only toggle the mode
  // around a periodic evaluation (torchrl's online decision transformer).
  void full_batch_loops() {
    auto zero_args = [](const Module& m, const Call& c) {
      NodeId args = m.tree.field(c.node, F::Arguments);
      return args != kNone && m.tree.first_named_child(args) == kNone;
    };
    auto eval_switch = [&](const Module& m, const Call& c) {
      return c.method == "eval" && c.receiver != kNone && !c.target && zero_args(m, c);
    };
    std::vector<char> has_eval_loop(pm.functions_.size(), 0);
    for (auto& mp : pm.modules_)
      for (auto& L : mp->loops)
        if (L.kind == LoopKind::EvalStep && L.fn) has_eval_loop[L.fn->id] = 1;
    std::function<bool(const Function&, int)> evaluates = [&](const Function& f, int depth) {
      if (f.reaches_backward || f.body == kNone) return false;
      if (has_eval_loop[f.id]) return true;
      for (uint32_t ci : f.calls) {
        const Call& c = f.mod->calls[ci];
        if (eval_switch(*f.mod, c)) return true;
        if (depth < 3 && c.target && c.target != &f && evaluates(*c.target, depth + 1)) return true;
      }
      return false;
    };
    for (auto& mp : pm.modules_) {
      Module& m = *mp;
      for (auto& L : m.loops) {
        if (L.kind != LoopKind::TrainStep || L.data_loop) continue;
        NodeId body = m.tree.field(L.node, F::Body);
        if (body == kNone) continue;
        // the evaluation runs unconditionally: not under any test, not even of configuration
        // (Megatron's loop collects GRPO rollouts in eval mode only `if args.perform_rl_step:`;
        // in pretraining its iterations are ordinary steps)
        auto unconditional = [&](NodeId n) {
          for (NodeId p = m.tree.parent(n); p != kNone && p != body; p = m.tree.parent(p)) {
            K k = m.tree.kind(p);
            if (k == K::IfStatement || k == K::ElifClause || k == K::ElseClause || k == K::ConditionalExpression ||
                k == K::BooleanOperator || k == K::ExceptClause || k == K::ForStatement || k == K::WhileStatement ||
                k == K::MatchStatement)
              return false;
          }
          return true;
        };
        GuardContext gc{&pm, &m, L.node, &L.varying, false};
        for (uint32_t ci : L.calls) {
          const Call& c = m.calls[ci];
          if (!m.tree.contains(body, c.node)) continue;
          if (!(c.target && evaluates(*c.target, 0))) continue;
          if (!unconditional(c.node) || is_guarded(gc, c.node)) continue;
          L.evaluates_each_iteration = true;
          break;
        }
      }
    }
  }

  void step_reach() {
    pm.reach_.clear();
    pm.reach_.resize(pm.functions_.size());
    std::deque<Function*> work;
    // step loops
    for (auto& mp : pm.modules_) {
      Module& m = *mp;
      for (auto& L : m.loops) {
        if (L.kind != LoopKind::TrainStep && L.kind != LoopKind::EvalStep) continue;
        auto& vary = L.varying;
        collect_assigned_names(m.tree, L.node, vary);
        if (L.fn) {
          const Function* g = L.fn;
          while (g && !g->cls) g = g->outer;
          if (g && g->cls)
            for (auto& a : g->cls->attrs_mutated_outside_init) vary.insert("self." + std::string(a));
        }
        GuardContext gc{&pm, &m, L.node, &vary, false};
        NodeId body = m.tree.field(L.node, F::Body);
        // a closure defined in the step (LBFGS's `optimizer.step(closure)`) runs in that step
        for (auto& fp : m.functions) {
          Function* f = fp.get();
          if (f->outer != L.fn || body == kNone || !m.tree.contains(body, f->def)) continue;
          if (is_guarded(gc, f->def)) continue;
          auto r = std::make_unique<CallReach>();
          r->root = &L;
          r->loop_mod = &m;
          r->loop_node = L.node;
          r->kind = L.kind;
          r->desc = std::string(loop_kind_name(L.kind));
          r->unconditional = true;
          function_varying(*f, r->varying);
          add_reach(f, std::move(r), work);
        }
        for (uint32_t ci : L.calls) {
          const Call& c = m.calls[ci];
          if (!c.target || body == kNone || !m.tree.contains(body, c.node)) continue;
          if (is_guarded(gc, c.node)) continue;
          auto r = std::make_unique<CallReach>();
          r->root = &L;
          r->loop_mod = &m;
          r->loop_node = L.node;
          r->kind = L.kind;
          r->desc = std::string(loop_kind_name(L.kind));
          r->chain = {&c};
          r->entries = {&c};
          r->chain_mods = {&m};
          r->varying = varying_params(gc, c, *c.target);
          function_varying(*c.target, r->varying);
          add_reach(c.target, std::move(r), work);
        }
      }
    }
    // framework hooks are step bodies themselves
    for (auto* f : pm.functions_) {
      if (!f->is_step_hook) continue;
      auto r = std::make_unique<CallReach>();
      r->root = f;
      r->loop_mod = f->mod;
      r->loop_node = f->def;
      // Lightning's validation, test and prediction hooks run once a batch of an evaluation
      r->kind = f->name == "validation_step" || f->name == "test_step" || f->name == "predict_step"
                    ? LoopKind::EvalStep
                    : LoopKind::TrainStep;
      r->desc = f->hook_desc;
      r->hook = true;
      r->unconditional = true;
      for (auto p : f->params)
        if (p != "self") r->varying.insert(std::string(p));
      for (const char* s : {"self.global_step", "self.current_epoch", "self.trainer", "self.state"}) r->varying.insert(s);
      function_varying(*f, r->varying);
      add_reach(f, std::move(r), work);
    }
    // breadth-first through calls; depth-limited
    while (!work.empty()) {
      Function* f = work.front();
      work.pop_front();
      const Module& m = *f->mod;
      // Process each reach of f that has not been expanded yet (reaches are appended).
      for (size_t ri = 0; ri < pm.reach_[f->id].size(); ++ri) {
        CallReach* r = pm.reach_[f->id][ri].get();
        if (r->chain.size() >= 12) continue;
        GuardContext gc{&pm, &m, f->body, &r->varying, true};
        for (uint32_t ci : f->calls) {
          const Call& c = m.calls[ci];
          if (!c.target || c.target == f) continue;
          if (is_guarded(gc, c.node)) continue;
          // `if blocking and ...:` in `finalize(blocking=False)` called every step: the calls in
          // a branch that every way in from this root rules out do not run from it
          if (!r->unconditional && !r->entries.empty() &&
              std::all_of(r->entries.begin(), r->entries.end(),
                          [&](const Call* e) { return call_rules_out(pm, *e, *f, c.node); })) {
            r->pruned = true;
            continue;
          }
          bool known = false;
          for (auto& e : pm.reach_[c.target->id])
            if (e->root == r->root) {
              known = true;
              if (add_entry(*e, &c) && e->pruned) work.push_back(c.target);
            }
          if (known) continue;
          auto nr = std::make_unique<CallReach>();
          nr->root = r->root;
          nr->loop_mod = r->loop_mod;
          nr->loop_node = r->loop_node;
          nr->kind = r->kind;
          nr->desc = r->desc;
          nr->hook = r->hook;
          nr->chain = r->chain;
          nr->chain.push_back(&c);
          nr->entries.push_back(&c);
          nr->chain_mods = r->chain_mods;
          nr->chain_mods.push_back(&m);
          nr->varying = varying_params(gc, c, *c.target);
          function_varying(*c.target, nr->varying);
          add_reach(c.target, std::move(nr), work);
        }
      }
    }
  }
};

bool ProgramModel::is_optimizer_step(const Module& m, const Call& c) const {
  if (c.qname == "torch_xla.core.xla_model.optimizer_step") return true;
  if (c.method != "step" || c.receiver == kNone) return false;
  for (auto& o : origins(m, c.receiver)) {
    if (o.rfind("torch.optim.lr_scheduler", 0) == 0) return false;
    if (o.rfind("torch.optim.", 0) == 0 || icontains(o, "optim")) return true;
  }
  std::string d = dotted_text(m.tree, c.receiver);
  if (d.empty()) {
    // opt_list[i].step(), self.optimizers()[0].step()
    auto txt = m.tree.text(c.receiver);
    return icontains(txt, "optim");
  }
  std::string_view last = last_component(d);
  if (icontains(last, "scaler")) return m.tree.field(c.node, F::Arguments) != kNone && positional_count(m, c) >= 1;
  return is_optimizer_name(last);
}

bool ProgramModel::is_backward(const Call& c) {
  return c.method == "backward" || c.method == "manual_backward" || c.qname == "torch.autograd.backward";
}

namespace {
// TRAINLINT_TIMING=1 prints the time of each phase to stderr (for bench notes and profiling).
// The build's phases, timed always (a clock read each) into the model (ProgramModel::build_phases,
// read by bench/bench_model.cpp), printed with TRAINLINT_TIMING.
struct PhaseTimer {
  std::vector<std::pair<std::string, double>>& into;
  bool on = std::getenv("TRAINLINT_TIMING") != nullptr;
  std::chrono::steady_clock::time_point t = std::chrono::steady_clock::now();
  void lap(const char* what) {
    auto now = std::chrono::steady_clock::now();
    double ms = std::chrono::duration<double, std::milli>(now - t).count();
    into.emplace_back(what, ms);
    if (on) std::fprintf(stderr, "trainlint: %-28s %8.1f ms\n", what, ms);
    t = now;
  }
};
}  // namespace

ProgramModel ProgramModel::build(std::vector<std::unique_ptr<SourceFile>> files, unsigned threads, ParseCache* cache,
                                 TreeStore* store) {
  ProgramModel pm;
  PhaseTimer timer{pm.build_phases_};
  std::atomic<int64_t> parse_ns{0}, collect_ns{0};
  pm.modules_.resize(files.size());
  if (threads == 0) threads = 1;
  // phase 1, the largest files first (on 16 cores, a 0.9 MB file of the torch tree pulled late
  // made the phase 1.8x its share of the work); each module lands at its own index
  auto file_size = [&](size_t i) { return files[i]->text().size(); };
  parallel_for_largest_first(files.size(), threads, file_size, [&](size_t i) {
    auto m = std::make_unique<Module>();
    m->index = static_cast<uint32_t>(i);
    m->path = files[i]->path();
    m->key = files[i]->abs_path();
    m->name_path = files[i]->project_path();
    m->src = std::move(files[i]);
    auto t0 = std::chrono::steady_clock::now();
    // fewer files than threads: a huge file is parsed in pieces on the threads left over
    unsigned per_file = std::max<unsigned>(1, threads / static_cast<unsigned>(std::max<size_t>(1, files.size())));
    std::optional<Tree> stored = store ? store->load(*m->src) : std::nullopt;
    if (stored) {
      m->tree = std::move(*stored);
    } else {
      m->tree = cache ? cache->parse(*m->src) : Tree::parse(*m->src, per_file);
      if (store) store->save(*m->src, m->tree);
    }
    auto t1 = std::chrono::steady_clock::now();
    collect_module(*m);
    auto t2 = std::chrono::steady_clock::now();
    parse_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count();
    collect_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(t2 - t1).count();
    pm.modules_[i] = std::move(m);
  });
  timer.lap("parse + collect");
  if (timer.on)
    std::fprintf(stderr, "trainlint:   (summed over threads: parse %.1f ms, collect %.1f ms)\n", parse_ns.load() / 1e6,
                 collect_ns.load() / 1e6);
  for (auto& m : pm.modules_)
    for (auto& f : m->functions) {
      f->id = static_cast<uint32_t>(pm.functions_.size());
      pm.functions_.push_back(f.get());
    }
  for (auto& m : pm.modules_)
    for (auto& c : m->classes) {
      c->id = static_cast<uint32_t>(pm.classes_.size());
      pm.classes_.push_back(c.get());
    }
  for (auto& m : pm.modules_)
    for (auto& d : m->argdefs) pm.argdefs_[d.dest].push_back(&d);
  ModelBuilder b{pm, threads, {}};
  // phase 2
  b.index_modules();
  timer.lap("index modules");
  // phase 3 (reads other modules' scopes, writes only its own calls/classes)
  b.param_pending.resize(pm.modules_.size());
  parallel_for(pm.modules_.size(), threads, [&](size_t i) { b.resolve_module(*pm.modules_[i]); });
  b.resolve_param_instances();
  b.link_callers();
  timer.lap("resolve calls");
  // phase 4
  b.link_imports();
  mark_test_modules(pm);
  b.build_programs();
  compute_reachability(pm, threads);
  timer.lap("imports + programs + reach");
  b.accelerator_facts();
  compute_accelerator_intent(pm, threads);
  timer.lap("accelerator facts");
  b.framework_hooks();
  b.call_graph_facts();
  compute_cuda_init_order(pm);
  timer.lap("call graph + loops");
  b.step_reach();
  b.data_path();
  b.full_batch_loops();
  // runs_every_step's two ways to yes: a step loop of the module around the node, or the
  // node's function reached every step
  pm.step_code_.assign(pm.modules_.size(), 0);
  for (auto& m : pm.modules_) {
    char& any = pm.step_code_[m->index];
    for (const Loop& l : m->loops) any |= l.kind == LoopKind::TrainStep || l.kind == LoopKind::EvalStep;
    for (auto& f : m->functions) any |= !pm.reach_[f->id].empty();
  }
  timer.lap("step reach + data path");
  return pm;
}

bool is_dataset_class(const Class& c) {
  static const std::initializer_list<std::string_view> bases = {
      "torch.utils.data.Dataset", "torch.utils.data.IterableDataset", "torch.utils.data.dataset.Dataset",
      "torch.utils.data.dataset.IterableDataset", "torchvision.datasets.VisionDataset",
      "torchvision.datasets.vision.VisionDataset", "torch.utils.data.TensorDataset"};
  if (c.derives_from(bases)) return true;
  return icontains(c.name, "dataset") && c.methods.count("__getitem__");
}

bool ProgramModel::runs_every_step_of(const Module& m, NodeId node, const Module& loop_mod, NodeId loop_node) const {
  const Tree& t = m.tree;
  if (&m == &loop_mod && t.contains(loop_node, node)) {
    auto sc = runs_every_step(m, node);
    return sc && sc->loop_node == loop_node;
  }
  Function* f = m.enclosing_function(node);
  if (!f) return false;
  for (auto& r : reach_[f->id]) {
    if (r->loop_mod != &loop_mod || r->loop_node != loop_node) continue;
    GuardContext gc{this, &m, f->body, &r->varying, true};
    return !is_guarded(gc, node);
  }
  return false;
}

bool ProgramModel::runs_every_epoch(const Module& m, NodeId node) const {
  const Tree& t = m.tree;
  for (NodeId p = t.parent(node); p != kNone; p = t.parent(p)) {
    K k = t.kind(p);
    if (k == K::FunctionDefinition || k == K::ClassDefinition || k == K::Lambda) return false;
    if (k != K::ForStatement && k != K::WhileStatement) continue;
    const Loop* L = loop_of(m, p);
    NodeId body = t.field(p, F::Body);
    if (!L || L->kind != LoopKind::Epoch || body == kNone || !t.contains(body, node)) continue;
    // names that change across epochs: the loop target, anything assigned in the loop (a
    // one-time `unfrozen = True` flag)
    std::unordered_set<std::string> vary;
    collect_assigned_names(t, p, vary);
    GuardContext gc{this, &m, p, &vary, false};
    return !is_guarded(gc, node);
  }
  return false;
}

std::optional<StepContext> ProgramModel::runs_every_step(const Module& m, NodeId node, bool epoch_steps) const {
  const Tree& t = m.tree;
  // a branch that no program holding this module can enter (`if self.autobalance:` when every
  // instance is built with the default `autobalance=False`)
  if (const Function* ef = m.enclosing_function(node); ef && !m.programs.empty()) {
    bool dead_everywhere = true, reached = false;
    for (uint32_t pid : m.programs) {
      const Program& p = programs_[pid];
      if (!p.reaches(ef)) continue;  // the programs that run the function at all
      reached = true;
      dead_everywhere &= p.in_dead_branch(m, node);
    }
    if (reached && dead_everywhere) return std::nullopt;
  }
  Function* f = m.enclosing_function(node);
  // 1. a step loop around the node in the same function
  for (NodeId p = t.parent(node); p != kNone; p = t.parent(p)) {
    K k = t.kind(p);
    if (k == K::FunctionDefinition || k == K::ClassDefinition) break;
    if (k != K::ForStatement && k != K::WhileStatement) continue;
    const Loop* L = loop_of(m, p);
    if (!L || (L->kind != LoopKind::TrainStep && L->kind != LoopKind::EvalStep)) continue;
    NodeId body = t.field(p, F::Body);
    if (body == kNone || !t.contains(body, node)) continue;  // the iterable or the else clause
    // once an iteration of a full-batch loop is once an epoch
    if (!epoch_steps && L->evaluates_each_iteration) return std::nullopt;
    GuardContext gc{this, &m, L->node, &L->varying, false};
    if (is_guarded(gc, node)) return std::nullopt;
    StepContext sc;
    sc.loop_mod = &m;
    sc.loop_node = L->node;
    sc.kind = L->kind;
    sc.desc = std::string(loop_kind_name(L->kind));
    return sc;
  }
  // 2. a function reached every step from a step loop or a hook
  if (!f) return std::nullopt;
  for (auto& r : reach_[f->id]) {
    if (!epoch_steps && r->kind == LoopKind::TrainStep && r->loop_mod) {
      const Loop* RL = loop_of(*r->loop_mod, r->loop_node);
      if (RL && RL->evaluates_each_iteration) continue;
    }
    GuardContext gc{this, &m, f->body, &r->varying, true};
    if (is_guarded(gc, node)) continue;
    // `if context is not None:` in `ema_scope(self, context=None)`, reached every step only
    // through `self.ema_scope()`: not from this root
    if (!r->unconditional && !r->entries.empty() &&
        std::all_of(r->entries.begin(), r->entries.end(), [&](const Call* c) { return call_rules_out(*this, *c, *f, node); }))
      continue;
    StepContext sc;
    sc.loop_mod = r->loop_mod;
    sc.loop_node = r->loop_node;
    sc.kind = r->kind;
    sc.desc = r->desc;
    sc.chain = r->chain;
    sc.chain_mods = r->chain_mods;
    return sc;
  }
  return std::nullopt;
}

}  // namespace tl::py
