// TL205 load-in-getitem: inside Dataset.__getitem__ (or a function it calls), a file open or
// deserialisation whose arguments do not depend on the index parameter.
#include <algorithm>
#include <optional>
#include <set>
#include <unordered_set>

#include "analyzer/python/guards.h"
#include "rules/python/common.h"
#include "rules/python/rules.h"

namespace tl::rules {
namespace {

bool is_load(std::string_view q) {
  return qname_in(q, {"builtins.open", "io.open", "json.load", "yaml.load", "yaml.safe_load", "yaml.full_load",
                      "yaml.unsafe_load", "pickle.load", "numpy.load", "torch.load", "h5py.File", "lmdb.open",
                      "scipy.io.loadmat", "numpy.loadtxt", "numpy.genfromtxt"}) ||
         q.rfind("pandas.read_", 0) == 0;
}

// Reads any name in `tainted` (identifiers, and dotted paths such as `self.x` when tainted).
bool reads_any(const py::Tree& t, py::NodeId n, const std::unordered_set<std::string>& tainted) {
  if (n == py::kNone) return false;
  std::vector<py::NodeId> stack{n};
  while (!stack.empty()) {
    py::NodeId x = stack.back();
    stack.pop_back();
    if (t.is(x, py::K::Identifier) && tainted.count(std::string(t.text(x)))) return true;
    if (t.is(x, py::K::Attribute)) {
      std::string d = py::dotted_text(t, x);
      if (!d.empty() && tainted.count(d)) return true;
    }
    for (py::NodeId c = t.first_child(x); c != py::kNone; c = t.next_sibling(c))
      if (t[c].named) stack.push_back(c);
  }
  return false;
}

struct Analyzer {
  RuleContext& ctx;
  const py::Function* root = nullptr;
  std::string root_desc;
  std::set<std::pair<const py::Function*, std::string>> seen;

  // Names in f that depend on the tainted parameters, by a small fixpoint over assignments.
  std::unordered_set<std::string> taint(const py::Function& f, std::unordered_set<std::string> tainted) {
    const py::Tree& t = f.mod->tree;
    for (int round = 0; round < 6; ++round) {
      bool changed = false;
      for (auto& [name, bs] : f.scope.names)
        for (auto& b : bs) {
          if (tainted.count(std::string(name))) break;
          py::NodeId v = b.value;
          if (v == py::kNone) continue;
          if (reads_any(t, v, tainted)) {
            tainted.insert(std::string(name));
            changed = true;
            break;
          }
        }
      // self.attr = <tainted> inside the function taints self.attr for later reads
      std::vector<py::NodeId> stack{f.body};
      while (!stack.empty()) {
        py::NodeId x = stack.back();
        stack.pop_back();
        if (x == py::kNone) continue;
        if (t.is(x, py::K::FunctionDefinition) && x != f.def) continue;
        if (t.is(x, py::K::Assignment)) {
          py::NodeId l = t.field(x, py::F::Left), r = t.field(x, py::F::Right);
          if (l != py::kNone && t.is(l, py::K::Attribute) && reads_any(t, r, tainted)) {
            std::string d = py::dotted_text(t, l);
            if (!d.empty() && tainted.insert(d).second) changed = true;
          }
        }
        for (py::NodeId c = t.first_child(x); c != py::kNone; c = t.next_sibling(c))
          if (t[c].named) stack.push_back(c);
      }
      if (!changed) break;
    }
    return tainted;
  }

  // `if self.cache is None: self.cache = load(...)`: a load guarded by a check on what it fills.
  // `n` may also be a call to `callee` that fills it (`if not self.data_file: self.open_data()`,
  // where `open_data` sets `self.data_file`): the callee's loads then run once per worker too.
  bool under_cache_guard(const py::Function& f, py::NodeId n, const py::Function* callee = nullptr) {
    const py::Tree& t = f.mod->tree;
    // the callee's `self.` assignments, read once, at the first `if` around the call (most
    // calls have none)
    std::optional<std::unordered_set<std::string>> callee_sets;
    for (py::NodeId p = t.parent(n); p != py::kNone && p != f.body; p = t.parent(p)) {
      if (!t.is(p, py::K::IfStatement)) continue;
      py::NodeId cond = t.field(p, py::F::Condition), cons = t.field(p, py::F::Consequence);
      if (cond == py::kNone || cons == py::kNone || !t.contains(cons, n)) continue;
      if (!callee_sets) {
        callee_sets.emplace();
        if (callee && callee->body != py::kNone) {
          std::unordered_set<std::string> all;
          py::collect_assigned_names(callee->mod->tree, callee->body, all);
          for (auto& a : all)
            if (a.rfind("self.", 0) == 0) callee_sets->insert(a);
        }
      }
      std::unordered_set<std::string> assigned = *callee_sets;
      py::collect_assigned_names(t, cons, assigned);
      for (auto& a : assigned)
        if (a.rfind("self.", 0) == 0 || a.find('.') == std::string::npos) {
          std::unordered_set<std::string> one{a};
          if (reads_any(t, cond, one)) return true;
        }
      if (py::icontains(t.text(cond), "hasattr") || py::icontains(t.text(cond), "is None")) return true;
    }
    return false;
  }

  // A deserialiser reading from a file object that an `open(...)` in this function produced.
  bool reads_opened_handle(const py::Function& f, const py::Call& c) {
    const py::Tree& t = f.mod->tree;
    py::NodeId a0 = ctx.model.positional_arg(*f.mod, c, 0);
    if (a0 == py::kNone || !t.is(a0, py::K::Identifier)) {
      // json.load(open(path)): the inner open is the finding
      if (a0 != py::kNone && t.is(a0, py::K::Call))
        if (auto* ic = f.mod->call_at(a0)) return is_load(ic->qname);
      return false;
    }
    auto* bs = f.scope.find_local(t.text(a0));
    if (!bs) return false;
    for (auto& b : *bs)
      if (b.value != py::kNone && t.is(b.value, py::K::Call))
        if (auto* oc = f.mod->call_at(b.value); oc && is_load(oc->qname)) return true;
    return false;
  }

  void visit(const py::Function& f, const std::unordered_set<std::string>& tainted_params,
             std::vector<const py::Call*> chain) {
    std::string key;
    {
      std::set<std::string> sorted(tainted_params.begin(), tainted_params.end());
      for (auto& s : sorted) key += s + ",";
    }
    if (!seen.insert({&f, key}).second || chain.size() > 6) return;
    auto tainted = taint(f, tainted_params);
    const py::Module& m = *f.mod;
    const py::Tree& t = m.tree;
    for (uint32_t ci : f.calls) {
      const py::Call& c = m.calls[ci];
      if (is_load(c.qname)) {
        py::NodeId args = t.field(c.node, py::F::Arguments);
        if (reads_any(t, args, tainted)) continue;
        if (reads_opened_handle(f, c)) continue;
        if (under_cache_guard(f, c.node)) continue;
        if (&m != &ctx.mod) continue;  // reported when that module is checked
        std::vector<Note> notes;
        notes.push_back(RuleContext::note_at(*root->mod, root->def, root_desc + " runs once per sample"));
        for (const py::Call* ch : chain)
          notes.push_back(RuleContext::note_at(*ch->mod, ch->node, "called from here for every sample"));
        std::string what(t.text(c.callee));
        ctx.report(c.node,
                   "`" + what + "(...)` in `__getitem__` loads the same file for every sample (its arguments do not "
                   "depend on the index): load it once in `__init__`",
                   std::move(notes));
        continue;
      }
      if (!c.target) continue;
      const py::Function& g = *c.target;
      if (under_cache_guard(f, c.node, &g)) continue;  // a lazy open, once per worker
      // which of the callee's parameters receive index-dependent values
      std::unordered_set<std::string> tp;
      size_t offset = (!g.params.empty() && g.params[0] == "self" && c.receiver != py::kNone) ? 1 : 0;
      py::NodeId args = t.field(c.node, py::F::Arguments);
      if (args != py::kNone) {
        size_t i = 0;
        for (py::NodeId a : t.named_child_range(args)) {
          if (t.is(a, py::K::KeywordArgument)) {
            py::NodeId k = t.field(a, py::F::Name), v = t.field(a, py::F::Value);
            if (k != py::kNone && reads_any(t, v, tainted)) tp.insert(std::string(t.text(k)));
          } else if (t.is(a, py::K::ListSplat) || t.is(a, py::K::DictionarySplat)) {
            if (reads_any(t, a, tainted))
              for (auto p : g.params) tp.insert(std::string(p));
          } else {
            size_t pi = offset + i++;
            if (reads_any(t, a, tainted)) {
              if (pi < g.params.size()) tp.insert(std::string(g.params[pi]));
              else
                for (auto p : g.params) tp.insert(std::string(p));
            }
          }
        }
      }
      // index-dependent self state flows into methods
      for (auto& s : tainted)
        if (s.rfind("self.", 0) == 0) tp.insert(s);
      auto next = chain;
      next.push_back(&c);
      visit(g, tp, std::move(next));
    }
  }
};

}  // namespace

void check_load_in_getitem(RuleContext& ctx) {
  // The Dataset.__getitem__ roots whose per-sample path reaches a function of this module (the
  // model computed the data path once for the whole run; this stays linear in the program).
  std::vector<const py::Function*> roots;
  for (auto& fp : ctx.mod.functions) {
    const py::DataPathInfo* dp = ctx.model.data_path(fp.get());
    if (!dp || dp->root->name != "__getitem__" || !dp->root->cls) continue;
    if (std::find(roots.begin(), roots.end(), dp->root) == roots.end()) roots.push_back(dp->root);
  }
  for (const py::Function* gi : roots) {
    if (gi->params.size() < 2) continue;
    Analyzer a{ctx, gi, "`__getitem__` of `" + std::string(gi->cls->name) + "`", {}};
    a.visit(*gi, {std::string(gi->params[1])}, {});
  }
}

}  // namespace tl::rules
