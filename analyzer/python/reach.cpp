// Program-level passes of the model that follow the code a program runs (docs/concepts.md "Program",
// "Test modules", TL302, TL303): which modules are tests, which functions each program reaches
// from its entry script, whether it shows accelerator intent, and the order in which CUDA is
// initialised along the calls from the entry points.
#include "analyzer/python/reach.h"

#include "analyzer/core/parallel.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <thread>

namespace tl::py {

namespace {

std::atomic<bool> g_reach_hubs{true};  // set_reach_hubs

// Decorators that only wrap a function (they neither call it nor register it somewhere): those of
// the standard library and of compilers, and, from any library, the well-known wrappers by name and
// the ones that set a mode for the call (`@set_lazy_legacy(False)`, `@set_grad_enabled(False)`:
// context managers used as decorators). Any other decorator may register the function
// (`@register_model`, `@MODELS.register_module()`, `@app.command()`), whose holder may call it.
bool wrapping_decorator(std::string_view q) {
  if (q.empty()) return false;
  for (std::string_view p : {"torch.", "functools.", "builtins.", "typing.", "typing_extensions.", "abc.",
                             "dataclasses.", "contextlib.", "warnings.", "numba.", "jax.", "triton.", "pytest.",
                             "unittest."})
    if (q.starts_with(p)) return true;
  size_t dot = q.rfind('.');
  std::string_view last = dot == std::string_view::npos ? q : q.substr(dot + 1);
  if (last.starts_with("set_")) return true;
  for (std::string_view w : {"wraps", "lru_cache", "cache", "cached_property", "contextmanager", "asynccontextmanager",
                             "overload", "override", "final", "deprecated", "no_type_check", "no_grad",
                             "inference_mode", "enable_grad", "autocast", "jit", "njit", "add_start_docstrings",
                             "add_end_docstrings"})
    if (last == w) return true;
  return false;
}

bool in_main_guard(const Module& m, NodeId n) {
  for (NodeId g : m.main_guards)
    if (m.tree.contains(g, n)) return true;
  return false;
}

// A module that only defines things (imports, defs, classes, assignments): its functions are
// called from outside the analysis, so each of them may run.
bool library_like(const Module& m) {
  if (m.has_main_guard) return false;
  const Tree& t = m.tree;
  if (t.root() == kNone) return true;
  for (NodeId s : t.named_child_range(t.root())) {
    switch (t.kind(s)) {
      case K::ForStatement: case K::WhileStatement: case K::WithStatement: return false;
      case K::ExpressionStatement: {
        NodeId e = t.first_named_child(s);
        if (e != kNone && (t.is(e, K::Call) || t.is(e, K::Await))) return false;
        break;
      }
      default: break;
    }
  }
  return true;
}


}  // namespace

struct ProgramReach {
  explicit ProgramReach(ProgramModel& m) : pm(m) {}
  ProgramModel& pm;

  // ---- test modules ----------------------------------------------------------------------
  void mark_test_modules() {
    std::vector<char> called(pm.functions_.size(), 0);  // by function id
    for (auto& mp : pm.modules_)
      for (auto& c : mp->calls)
        if (c.target) called[c.target->id] = 1;
    for (auto& mp : pm.modules_) {
      Module& m = *mp;
      std::string base = std::filesystem::path(m.path).filename().string();
      if (base.ends_with(".py") && (base.starts_with("test_") || base.ends_with("_test.py"))) {
        m.is_test = true;
        continue;
      }
      for (auto& cl : m.classes)
        if (cl->derives_from({"unittest.TestCase", "unittest.case.TestCase", "unittest.IsolatedAsyncioTestCase"})) {
          m.is_test = true;
          break;
        }
      if (m.is_test) continue;
      // a module that imports pytest is test code whatever its name: a test run as a script, a
      // fixtures module (`tests/common/datasets.py`), a doctest set-up. No training program
      // imports pytest.
      for (const std::string& q : m.imported_modules)
        if (q == "pytest" || q.starts_with("pytest.") || q == "_pytest" || q.starts_with("_pytest.")) {
          m.is_test = true;
          break;
        }
      if (m.is_test) continue;
      // top-level test_* functions that the module never calls itself (pytest calls them); a
      // training script's own `test_epoch(...)` helper is called by the script.
      for (auto& f : m.functions)
        if (!f->outer && !f->cls && f->name.starts_with("test_") && !called[f->id]) {
          m.is_test = true;
          break;
        }
    }
    // Test support: pytest's conftest.py, a package of test utilities, and the helpers of a test
    // folder (`tests/utils.py`, `tests/helpers/datamodules.py`) that no script runs and only tests
    // and other helpers import. They hold fixtures (a DataLoader over a few samples, a tiny model),
    // not a training program.
    std::vector<char> cand(pm.modules_.size(), 0);
    for (auto& mp : pm.modules_) {
      Module& m = *mp;
      if (m.is_test || m.has_main_guard) continue;
      std::filesystem::path rel(m.name_path.empty() ? m.path : m.name_path);
      if (rel.filename() == "conftest.py") {
        m.is_test = true;
        continue;
      }
      // a package named for test utilities (`accelerate/test_utils/training.py`: mock loaders over
      // a few CSV rows) holds fixtures whoever imports it, a script's test-mode switch included
      for (auto it = rel.begin(); it != rel.end() && std::next(it) != rel.end(); ++it)
        if (*it == "test_utils" || *it == "testing_utils") m.is_test = true;
      if (m.is_test) continue;
      for (auto it = rel.begin(); it != rel.end() && std::next(it) != rel.end(); ++it)
        if (*it == "tests" || *it == "test" || *it == "testing") cand[m.index] = 1;
    }
    // A candidate stays one while something imports it and every importer is a test or another
    // candidate: a script or library module importing it makes it part of their program, and a
    // file nothing imports is a script of its own.
    for (bool changed = true; changed;) {
      changed = false;
      std::vector<char> by_test(pm.modules_.size(), 0), by_other(pm.modules_.size(), 0);
      for (auto& mp : pm.modules_)
        for (Module* t : mp->imports)
          (mp->is_test || cand[mp->index] ? by_test : by_other)[t->index] = 1;
      for (auto& mp : pm.modules_)
        if (cand[mp->index] && (by_other[mp->index] || !by_test[mp->index])) {
          cand[mp->index] = 0;
          changed = true;
        }
    }
    // ... and a test imports it, directly or through other helpers (helpers that only import each
    // other are not test support by that alone)
    std::vector<char> from_test(pm.modules_.size(), 0);
    std::vector<Module*> work;
    for (auto& mp : pm.modules_)
      if (mp->is_test) work.push_back(mp.get());
    while (!work.empty()) {
      Module* x = work.back();
      work.pop_back();
      for (Module* t : x->imports)
        if (cand[t->index] && !from_test[t->index]) {
          from_test[t->index] = 1;
          work.push_back(t);
        }
    }
    for (auto& mp : pm.modules_)
      if (cand[mp->index] && from_test[mp->index]) mp->is_test = true;
  }

  // ---- reachability ----------------------------------------------------------------------
  struct Ref {
    Function* fn = nullptr;
    Class* cls = nullptr;
    bool class_value = false;  // the class itself is handed on (a factory), not an instance
  };

  // Functions and classes referenced (not called) by code: callbacks, `mp.spawn(main_worker)`,
  // `Thread(target=worker)`, registries (`MODELS = {"a": build_a}`), returned closures.
  void collect_refs(const Module& m, std::vector<std::pair<NodeId, Ref>>& top,
                    std::vector<std::pair<Function*, Ref>>& in_fn,
                    const StringSet& names) const {
    const Tree& t = m.tree;
    // The position is judged before the name: the parent's kind and field lie in the flat array
    // beside the node, where the name is a hash of its text (Debian's torch package: 578 K
    // identifiers, a third of them named like an analysed function or class, half of them where
    // a reference can stand; the names are now looked up for those 284 K, 87 K pass both).
    for (NodeId n = 0; n < t.size(); ++n) {
      if (!t.is(n, K::Identifier)) continue;
      NodeId p = t.parent(n);
      NodeId target = n;
      if (p != kNone) {
        K pk = t.kind(p);
        if ((pk == K::FunctionDefinition || pk == K::ClassDefinition) && t.field(p, F::Name) == n) continue;
        if (pk == K::KeywordArgument && t.field(p, F::Name) == n) continue;
        if (pk == K::Parameters || pk == K::DefaultParameter || pk == K::TypedParameter ||
            pk == K::TypedDefaultParameter)
          if (t.field(p, F::Value) != n) continue;
        if (pk == K::DottedName || pk == K::AliasedImport || pk == K::ImportStatement || pk == K::ImportFromStatement)
          continue;
        if (pk == K::Attribute) {
          if (t.field(p, F::Attribute) != n) continue;  // the object of `a.b` is judged with `a.b`
          target = p;
        }
        NodeId pp = t.parent(target);
        if (pp != kNone && t.is(pp, K::Call) && t.field(pp, F::Function) == target) continue;  // a call
        // `Conv2dNet = ConvNet` at a module's top level only names the same thing twice: the
        // calls through the new name resolve to the function or class as calls through the old
        // one do. As a reference it would make every program that imports the module run the
        // class's methods.
        if (pp != kNone && t.is(pp, K::Assignment) && t.field(pp, F::Right) == target) {
          NodeId left = t.field(pp, F::Left);
          if (left != kNone && t.is(left, K::Identifier)) {
            NodeId st = t.parent(pp);
            NodeId block = st == kNone ? kNone : t.parent(st);
            if (block != kNone && t.is(block, K::Module)) continue;
          }
        }
      }
      if (!names.count(t.text(n))) continue;
      auto r = pm.resolve(m, target, pm.scope_at(m, target), 0);
      Ref ref;
      using RK = ProgramModel::Resolved::Kind;
      if (r.kind == RK::Function) ref.fn = r.fn;
      else if (r.kind == RK::Class || r.kind == RK::Instance) {
        ref.cls = r.cls;
        ref.class_value = r.kind == RK::Class;
      }
      else continue;
      if (Function* f = m.enclosing_function(n)) in_fn.emplace_back(f, ref);
      else top.emplace_back(n, ref);
    }
  }

  void reachability(unsigned threads) {
    StringSet names;  // views of the model's names, which outlive it
    for (Function* f : pm.functions_) names.insert(f->name);
    for (auto& mp : pm.modules_)
      for (auto& c : mp->classes) names.insert(c->name);
    std::vector<std::vector<std::pair<NodeId, Ref>>> top(pm.modules_.size());
    std::vector<std::vector<std::pair<Function*, Ref>>> in_fn_per_mod(pm.modules_.size());
    parallel_for(pm.modules_.size(), threads,
                 [&](size_t i) { collect_refs(*pm.modules_[i], top[i], in_fn_per_mod[i], names); });
    std::vector<std::vector<Ref>> fn_refs(pm.functions_.size());
    for (auto& v : in_fn_per_mod)
      for (auto& [f, r] : v) fn_refs[f->id].push_back(r);
    std::vector<std::vector<Function*>> nested(pm.functions_.size());
    for (Function* f : pm.functions_)
      if (f->outer) nested[f->outer->id].push_back(f);

    pm.fn_referenced_.assign(pm.functions_.size(), 0);
    pm.class_referenced_.clear();
    auto note_ref = [&](const Ref& r) {
      if (r.fn) pm.fn_referenced_[r.fn->id] = 1;
      if (r.class_value) pm.class_referenced_.insert(r.cls);
    };
    for (auto& v : in_fn_per_mod)
      for (auto& [f, r] : v) note_ref(r);
    for (auto& v : top)
      for (auto& [n, r] : v) note_ref(r);
    pm.class_has_subclass_.clear();
    for (auto& mp : pm.modules_)
      for (auto& c : mp->classes)
        for (Class* b : c->local_bases) pm.class_has_subclass_.insert(b);

    // What every program reads of a module, computed once rather than once per program (the
    // programs of a large tree import most of it: the work was programs x code).
    seeds_.assign(pm.modules_.size(), {});
    parallel_for(pm.modules_.size(), threads, [&](size_t i) { seeds_[i] = module_seeds(*pm.modules_[i], top[i]); });

    // Programs are reached on the run's threads, reading only the shared facts above (every
    // function's successors computed first, so that nothing shared is written), each from the
    // walk of a hub it shares with other programs (below) where it has one. (Programs are many,
    // and where the tree is a library that imports itself, as torch does, each reaches most of
    // it: Debian's torch package has 270 programs reaching 3,500 functions each.) The walk reads
    // ids in flat arrays only, never the model's objects:
    // visiting a Function or a Class (each its own allocation, scattered among the parser's) cost
    // a cache miss each, and the walk was bound by them.
    {
      std::vector<Successors> succ(pm.functions_.size());
      parallel_for(pm.functions_.size(), threads,
                   [&](size_t i) { succ[i] = successors(*pm.functions_[i], fn_refs, nested); });
      succ_fns_.clear();
      succ_classes_.clear();
      for (auto& sc : succ) {
        succ_fns_.add_row(sc.fns);
        succ_classes_.add_row(sc.classes);
      }
    }
    class_methods_.clear();
    class_bases_.clear();
    std::vector<uint32_t> row;
    for (const Class* c : pm.classes_) {
      row.clear();
      for (auto& [n, f] : c->methods)
        if (f) row.push_back(f->id);
      std::sort(row.begin(), row.end());
      class_methods_.add_row(row);
      row.clear();
      for (const Class* b : c->local_bases) row.push_back(b->id);
      class_bases_.add_row(row);
    }
    // Programs share most of what they reach (each of the torch package's imports `torch`, whose
    // import-time code reaches most of it): what the import closure of a shared module reaches is
    // computed once (a hub), and a program's walk starts from it.
    choose_hubs();
    // what a hub's import closure reaches, none of it an entry, with the calls in `dead` filtered
    auto reach_hub = [&](Hub& h, const std::unordered_map<const Module*, std::vector<NodeId>>& dead) {
      thread_local ReachScratch scratch;
      Program closure;
      for (size_t w = 0; w < h.modules.size(); ++w)
        for (uint64_t bits = h.modules[w]; bits; bits &= bits - 1)
          closure.members.push_back(pm.modules_[w * 64 + std::countr_zero(bits)].get());
      closure.dead_branches = dead;
      reach_program(closure, fn_refs, nested, scratch, nullptr);
      h.fns = std::move(closure.reached_ids);
      h.classes = std::move(closure.reached_class_ids);
    };
    parallel_for(hubs_.size(), threads, [&](size_t i) { reach_hub(hubs_[i], {}); });
    parallel_for(pm.programs_.size(), threads, [&](size_t i) {
      thread_local ReachScratch scratch;
      reach_program(pm.programs_[i], fn_refs, nested, scratch, hub_of_program_[i] < 0 ? nullptr : &hubs_[hub_of_program_[i]]);
    });
    // the dead-branch plans of every function some program reaches and that has candidate ifs:
    // once, where each program asked again for every function it reaches (the torch package's 270
    // programs reach 935 K functions in all, 15 K distinct). The candidate ifs are found only for
    // the reached functions dead_plans() may plan for (may_plan): a walk of every function's body
    // was a tenth of the reachability pass on the torch package, most of it for functions no
    // program reaches.
    {
      std::vector<char> reached(pm.functions_.size(), 0);
      for (const Program& p : pm.programs_)
        for (uint32_t id : p.reached_ids) reached[id] = 1;
      std::vector<uint32_t> plannable;
      for (uint32_t id = 0; id < reached.size(); ++id)
        if (reached[id] && may_plan(*pm.functions_[id])) plannable.push_back(id);
      if_candidates_.assign(pm.functions_.size(), {});
      parallel_for(plannable.size(), threads,
                   [&](size_t k) { if_candidates_[plannable[k]] = if_candidates(*pm.functions_[plannable[k]]); });
      std::vector<uint32_t> ids;
      for (uint32_t id : plannable)
        if (!if_candidates_[id].empty()) ids.push_back(id);
      dead_plans_.assign(pm.functions_.size(), {});
      parallel_for(ids.size(), threads, [&](size_t k) { dead_plans_[ids[k]] = dead_plans(*pm.functions_[ids[k]]); });
    }
    std::vector<char> again(pm.programs_.size(), 0);
    parallel_for(pm.programs_.size(), threads, [&](size_t i) { again[i] = find_dead_branches(pm.programs_[i]); });
    // Programs with dead branches are reached again, the branches' calls no longer counting. The
    // hub's walk did not filter them; programs that share a hub and the same dead branches (the
    // torch package's: its core's callers fix the same flags) share a walk of the hub that does.
    using DeadKey = std::vector<std::pair<uint32_t, std::vector<NodeId>>>;
    std::map<std::pair<int32_t, DeadKey>, std::vector<uint32_t>> by_key;
    for (uint32_t i = 0; i < pm.programs_.size(); ++i) {
      if (!again[i]) continue;
      DeadKey key;
      if (hub_of_program_[i] >= 0) {
        for (auto& [m, nodes] : pm.programs_[i].dead_branches) {
          key.emplace_back(m->index, nodes);
          std::sort(key.back().second.begin(), key.back().second.end());
        }
        std::sort(key.begin(), key.end());
      }
      by_key[{hub_of_program_[i], std::move(key)}].push_back(i);
    }
    std::vector<Hub> dead_hubs;
    std::vector<std::pair<uint32_t, int32_t>> second;  // program, index in dead_hubs or -1
    for (auto& [key, progs] : by_key) {
      int32_t h = -1;
      if (key.first >= 0 && progs.size() >= 2) {
        h = static_cast<int32_t>(dead_hubs.size());
        dead_hubs.push_back({hubs_[key.first].modules, {}, {}, progs[0]});
      }
      for (uint32_t pi : progs) second.emplace_back(pi, h);
    }
    parallel_for(dead_hubs.size(), threads,
                 [&](size_t i) { reach_hub(dead_hubs[i], pm.programs_[dead_hubs[i].dead_of].dead_branches); });
    parallel_for(second.size(), threads, [&](size_t i) {
      thread_local ReachScratch scratch;
      auto [pi, h] = second[i];
      reach_program(pm.programs_[pi], fn_refs, nested, scratch, h < 0 ? nullptr : &dead_hubs[h]);
    });
  }

  // A module whose import closure lies in several programs, and what that closure's import-time
  // code reaches (as members, none the entry): closed under calls, references, methods and bases.
  struct Hub {
    std::vector<uint64_t> modules;  // its import closure, a bit per module index
    std::vector<uint32_t> fns, classes;  // reached ids, sorted
    uint32_t dead_of = 0;  // (a walk with dead branches filtered) the program whose branches they are
  };
  std::vector<Hub> hubs_;
  std::vector<int32_t> hub_of_program_;  // per program: index in hubs_, or -1

  // Each program's hub: of its members other than the entry, the one whose import closure is the
  // largest, where that closure is worth sharing (it holds a few modules, and the module is the
  // choice of two programs or more). A hub's closure must lie in the program's members:
  // build_programs makes members import-closed (the entry's import closure; a program of a
  // module in an import cycle nothing imports has the entry alone, and so no hub).
  void choose_hubs() {
    hubs_.clear();
    hub_of_program_.assign(pm.programs_.size(), -1);
    if (!g_reach_hubs.load()) return;
    const size_t n = pm.modules_.size(), words = (n + 63) / 64;
    // The closures are a bit per module and module (2 MB at 4,096 modules): a larger tree goes
    // without hubs (its programs are reached as they would be, one walk each).
    if (pm.programs_.size() < 2 || n > 4096) return;
    // import closures: a bit per module, to a fixed point (cycles included), each pass in the
    // order a depth-first walk of the imports finishes modules, so that a module is merged after
    // the modules it imports (one pass where there are no cycles, and one to see nothing change)
    std::vector<uint32_t> order;
    {
      order.reserve(n);
      std::vector<char> state(n, 0);  // 1: on the stack, 2: finished
      std::vector<std::pair<uint32_t, size_t>> stack;
      for (uint32_t r = 0; r < n; ++r) {
        if (state[r]) continue;
        stack.emplace_back(r, 0);
        state[r] = 1;
        while (!stack.empty()) {
          auto& [x, k] = stack.back();
          const auto& imps = pm.modules_[x]->imports;
          if (k < imps.size()) {
            uint32_t t = imps[k++]->index;
            if (!state[t]) {
              state[t] = 1;
              stack.emplace_back(t, 0);
            }
            continue;
          }
          state[x] = 2;
          order.push_back(x);
          stack.pop_back();
        }
      }
    }
    std::vector<std::vector<uint64_t>> closure(n, std::vector<uint64_t>(words, 0));
    for (size_t i = 0; i < n; ++i) closure[i][i / 64] |= uint64_t{1} << (i % 64);
    for (bool changed = true; changed;) {
      changed = false;
      for (uint32_t i : order)
        for (const Module* t : pm.modules_[i]->imports)
          if (t->index != i)
            for (size_t w = 0; w < words; ++w) {
              uint64_t merged = closure[i][w] | closure[t->index][w];
              if (merged != closure[i][w]) {
                closure[i][w] = merged;
                changed = true;
              }
            }
    }
    std::vector<uint32_t> size(n, 0);
    for (size_t i = 0; i < n; ++i)
      for (uint64_t w : closure[i]) size[i] += static_cast<uint32_t>(std::popcount(w));
    constexpr uint32_t kMinModules = 8;
    std::vector<int32_t> choice(pm.programs_.size(), -1);
    std::vector<uint32_t> chosen_by(n, 0);
    for (size_t pi = 0; pi < pm.programs_.size(); ++pi) {
      const Program& p = pm.programs_[pi];
      int32_t best = -1;
      for (const Module* m : p.members)
        if (m != p.entry && size[m->index] >= kMinModules &&
            (best < 0 || size[m->index] > size[best] || (size[m->index] == size[best] && m->index < static_cast<uint32_t>(best))))
          best = static_cast<int32_t>(m->index);
      choice[pi] = best;
      if (best >= 0) ++chosen_by[best];
    }
    std::vector<int32_t> hub_index(n, -1);
    for (size_t pi = 0; pi < pm.programs_.size(); ++pi) {
      int32_t m = choice[pi];
      if (m < 0 || chosen_by[m] < 2) continue;
      if (hub_index[m] < 0) {
        hub_index[m] = static_cast<int32_t>(hubs_.size());
        hubs_.push_back({std::move(closure[m]), {}, {}, 0});
      }
      hub_of_program_[pi] = hub_index[m];
    }
  }

  static constexpr uint32_t kNoId = UINT32_MAX;
  static uint32_t id_of(const Function* f) { return f ? f->id : kNoId; }
  static uint32_t id_of(const Class* c) { return c ? c->id : kNoId; }

  // A module's import-time code, as every program that imports it runs it: ids of what it leads
  // to (kNoId for none).
  struct Seed {
    NodeId node = kNone;
    uint32_t fn = kNoId, cls = kNoId;
    bool guarded = false;  // under the main guard
  };
  struct ModuleSeeds {
    std::vector<Seed> calls;                 // top-level calls of analysed functions or classes
    std::vector<Seed> refs;                  // top-level references (`top`)
    std::vector<uint32_t> registered_fns;    // registered by a decorator
    std::vector<uint32_t> registered_classes;
    bool library_like = false;
  };
  ModuleSeeds module_seeds(Module& m, const std::vector<std::pair<NodeId, Ref>>& top) const {
    ModuleSeeds s;
    for (auto& c : m.calls)
      if (!c.fn && (c.target || c.target_class))
        s.calls.push_back({c.node, id_of(c.target), id_of(c.target_class), in_main_guard(m, c.node)});
    s.refs.reserve(top.size());
    for (auto& [n, r] : top) s.refs.push_back({n, id_of(r.fn), id_of(r.cls), in_main_guard(m, n)});
    // registered by a decorator (`@MODELS.register_module()`, `@app.command()`): called by
    // whoever holds the registry
    for (auto& f : m.functions)
      if (!f->outer && !f->cls)
        for (auto& d : f->decorators)
          if (!wrapping_decorator(d)) {
            s.registered_fns.push_back(f->id);
            break;
          }
    for (auto& c : m.classes) {
      NodeId dd = m.tree.parent(c->def);
      if (dd == kNone || !m.tree.is(dd, K::DecoratedDefinition)) continue;
      for (NodeId d = m.tree.first_child(dd); d != kNone; d = m.tree.next_sibling(d)) {
        if (!m.tree.is(d, K::Decorator)) continue;
        NodeId e = m.tree.first_named_child(d);
        if (e != kNone && m.tree.is(e, K::Call)) e = m.tree.field(e, F::Function);
        if (!wrapping_decorator(pm.qualified_name(m, e))) {
          s.registered_classes.push_back(c->id);
          break;
        }
      }
    }
    s.library_like = library_like(m);
    m.defines_only = s.library_like;
    return s;
  }

  // The `if` statements of `f`'s own body (nested definitions excluded) whose condition has a
  // shape `dead_parts` can decide: a name or attribute, its negation, or a comparison.
  std::vector<NodeId> if_candidates(const Function& f) const {
    std::vector<NodeId> out;
    const Tree& t = f.mod->tree;
    if (f.body == kNone) return out;
    std::vector<NodeId> stack{f.body};
    while (!stack.empty()) {
      NodeId n = stack.back();
      stack.pop_back();
      K k = t.kind(n);
      if (k == K::FunctionDefinition || k == K::ClassDefinition || k == K::Lambda) continue;
      if (k == K::IfStatement) {
        NodeId cond = t.field(n, F::Condition);
        while (cond != kNone && t.is(cond, K::ParenthesizedExpression)) cond = t.first_named_child(cond);
        if (cond != kNone) {
          K ck = t.kind(cond);
          if (ck == K::Identifier || ck == K::Attribute || ck == K::NotOperator || ck == K::ComparisonOperator)
            out.push_back(n);
        }
      }
      // statements only: an `if` statement is never inside an expression
      for (NodeId c = t.first_child(n); c != kNone; c = t.next_sibling(c))
        if (t[c].named && t[c].subtree_end - c > 1) stack.push_back(c);
    }
    return out;
  }
  // The functions and classes a function's calls, references and nested definitions lead to,
  // each once, as ids: the same in every program without dead branches, so computed once per
  // function before the programs are reached (succ_fns_, succ_classes_).
  struct Successors {
    std::vector<uint32_t> fns, classes;
  };
  static Successors successors(const Function& f, const std::vector<std::vector<Ref>>& fn_refs,
                               const std::vector<std::vector<Function*>>& nested) {
    Successors s;
    for (uint32_t ci : f.calls) {
      const Call& c = f.mod->calls[ci];
      if (c.target) s.fns.push_back(c.target->id);
      if (c.target_class) s.classes.push_back(c.target_class->id);
    }
    for (auto& r : fn_refs[f.id]) {
      if (r.fn) s.fns.push_back(r.fn->id);
      if (r.cls) s.classes.push_back(r.cls->id);
    }
    for (Function* g : nested[f.id]) s.fns.push_back(g->id);
    auto dedup = [](auto& v) {
      std::sort(v.begin(), v.end());
      v.erase(std::unique(v.begin(), v.end()), v.end());
    };
    dedup(s.fns);
    dedup(s.classes);
    return s;
  }
  // A list of ids per index, all rows in one array.
  struct Rows {
    std::vector<uint32_t> start{0}, ids;
    void clear() {
      start.assign(1, 0);
      ids.clear();
    }
    void add_row(const std::vector<uint32_t>& r) {
      ids.insert(ids.end(), r.begin(), r.end());
      start.push_back(static_cast<uint32_t>(ids.size()));
    }
    std::span<const uint32_t> operator[](size_t i) const { return {ids.data() + start[i], ids.data() + start[i + 1]}; }
  };
  Rows succ_fns_, succ_classes_;      // per function id: where its calls, references and nested defs lead
  Rows class_methods_, class_bases_;  // per class id: its methods, its analysed bases
  std::vector<ModuleSeeds> seeds_;
  std::vector<std::vector<NodeId>> if_candidates_;  // per function id (only those dead_plans() may plan for)

  // `self.<attr>` set once, in the class's own `__init__`, and never elsewhere, in a class no
  // analysed class derives from and that is not handed on as a value: the value node (and the
  // `__init__` in `*init`), else kNone.
  NodeId set_once_in_init(const Class& cls, std::string_view attr, const Function** init) const {
    if (pm.class_has_subclass_.count(&cls) || pm.class_referenced_.count(&cls) ||
        cls.attrs_mutated_outside_init.count(attr))
      return kNone;
    auto it = cls.attr_values.find(attr);
    if (it == cls.attr_values.end() || it->second.size() != 1) return kNone;
    const Function* i = cls.find_method("__init__");
    if (!i || i->cls != &cls || !i->mod->tree.contains(i->def, it->second[0])) return kNone;
    *init = i;
    return it->second[0];
  }

  // The index of parameter `name` among the positional arguments of `f`'s callers, or -1 when it
  // cannot be passed by position (after `*args` or `*`).
  static int positional_index(const Function& f, std::string_view name) {
    const Tree& t = f.mod->tree;
    NodeId ps = t.field(f.def, F::Parameters);
    if (ps == kNone) return -1;
    int i = 0;
    for (NodeId c : t.named_child_range(ps)) {
      K k = t.kind(c);
      // after `*args` or a bare `*` the parameters are keyword-only; `/` ends the positional-only ones
      if (k == K::ListSplatPattern || k == K::DictionarySplatPattern || (k == K::Other && t.text(c) == "*")) return -1;
      if (k == K::Other) continue;
      NodeId id = c;
      if (k == K::DefaultParameter || k == K::TypedParameter || k == K::TypedDefaultParameter) {
        id = t.field(c, F::Name);
        if (id == kNone || !t.is(id, K::Identifier)) id = t.first_named_child(c);
      }
      if (id != kNone && t.is(id, K::Identifier) && t.text(id) == name) return i;
      ++i;
    }
    return -1;
  }

  // A parameter of `f` as find_dead_branches reads it: what each call of `f` passes for it (the
  // default where the call leaves it out; unknown where the call is not plain), the same in every
  // program. `unknown`: not a plain parameter (reassigned in the body, or no such parameter).
  struct ParamSource {
    bool unknown = false;
    std::vector<std::pair<const Call*, ValueSet>> calls;
  };
  // The binding of `name` as a plain parameter of `f`: null when f has no such parameter or
  // reassigns it in the body.
  static const Binding* plain_param(const Function& f, std::string_view name) {
    const Binding* param = nullptr;
    if (auto* bs = f.scope.find_local(name))
      for (auto& b : *bs) {
        if (b.kind != Binding::Kind::Param) return nullptr;  // reassigned in the body
        param = &b;
      }
    return param;
  }
  ParamSource param_source(const Function& f, std::string_view name) const {
    ParamSource out;
    const Binding* param = plain_param(f, name);
    if (!param) {
      out.unknown = true;
      return out;
    }
    int idx = positional_index(f, name);
    for (const Call* c : pm.callers_of(&f)) out.calls.emplace_back(c, call_value(f, name, *param, idx, *c));
    return out;
  }
  // What call `c` passes for parameter `name` of `f` (its binding `param`, at positional index
  // `idx`, -1 when keyword-only): its argument, or the default where the call leaves it out.
  ValueSet call_value(const Function& f, std::string_view name, const Binding& param, int idx, const Call& c) const {
    ValueSet v;
    size_t implicit = ProgramModel::implicit_args(c, f);
    if (idx >= 0 && static_cast<size_t>(idx) < implicit) {
      v.unknown = true;
      return v;
    }
    int pos = idx < 0 ? -1 : idx - static_cast<int>(implicit);
    v = pm.keyword_values(*c.mod, c, name, pos);
    if (v.maybe_absent) {
      if (param.default_value == kNone) {
        v.unknown = true;
      } else {
        v.maybe_absent = false;
        v.merge(pm.eval(*f.mod, param.default_value));
      }
    }
    return v;
  }

  // Does call `c` into `f` rule out the branch of f's body that holds `node`: an enclosing `if`
  // tests a plain parameter (`if context is not None:`, `if verbose:`) that this call fixes, by
  // its argument or by leaving the default, so that the branch cannot run?
  bool call_rules_out(const Call& c, const Function& f, NodeId node) const {
    const Tree& t = f.mod->tree;
    if (pm.has_splat(*c.mod, c)) return false;
    for (NodeId cur = node, p = t.parent(node); p != kNone && cur != f.body; cur = p, p = t.parent(p)) {
      if (t.is(p, K::FunctionDefinition) || t.is(p, K::ClassDefinition) || t.is(p, K::Lambda)) return false;
      if (!t.is(p, K::IfStatement) || t.field(p, F::Condition) == cur) continue;
      // the values this call gives a parameter that the condition tests
      auto call_values = [&](const CondShape& shape) -> std::optional<ValueSet> {
        if (!t.is(shape.subject, K::Identifier)) return std::nullopt;
        std::string_view name = t.text(shape.subject);
        const Binding* param = plain_param(f, name);
        if (!param) return std::nullopt;
        return call_value(f, name, *param, positional_index(f, name), c);
      };
      if (auto shape = cond_shape(t, p)) {
        if (auto vs = call_values(*shape))
          for (NodeId part : dead_parts(t, p, *shape, *vs))
            if (t.contains(part, node)) return true;
        continue;
      }
      // `if blocking and not queue_empty():` called with `blocking=False`: one false operand of
      // an `and` rules out the body (never the else)
      NodeId body = t.field(p, F::Consequence);
      if (body == kNone || !t.contains(body, node)) continue;
      std::vector<NodeId> todo{t.field(p, F::Condition)};
      bool dead = false;
      while (!todo.empty() && !dead) {
        NodeId e = todo.back();
        todo.pop_back();
        while (e != kNone && t.is(e, K::ParenthesizedExpression)) e = t.first_named_child(e);
        if (e == kNone) continue;
        if (t.is(e, K::BooleanOperator) && t.operator_text(e) == "and") {
          todo.push_back(t.field(e, F::Left));
          todo.push_back(t.field(e, F::Right));
          continue;
        }
        auto shape = shape_of(t, e);
        if (!shape) continue;
        auto vs = call_values(*shape);
        if (!vs) continue;
        for (NodeId part : dead_parts(t, p, *shape, *vs))
          if (part == body) dead = true;
      }
      if (dead) return true;
    }
    return false;
  }
  // The values the parameter takes in program `p`: from every call in code the program runs.
  // Unknown when a call's is, or when no call runs in the program.
  ValueSet param_values(const Program& p, const ParamSource& s) const {
    ValueSet out;
    if (s.unknown) {
      out.unknown = true;
      return out;
    }
    size_t runs = 0;
    for (auto& [c, v] : s.calls) {
      if (!pm.runs_in_program(p, *c->mod, c->node)) continue;
      ++runs;
      out.merge(v);
      if (out.unknown) return out;
    }
    if (!runs) out.unknown = true;
    return out;
  }

  // The shape of an `if` condition dead_parts can decide: a name or attribute (`subject`), its
  // negation, or its comparison with None.
  struct CondShape {
    NodeId subject = kNone;
    enum class Test : uint8_t { Truth, IsNone, IsNotNone } test = Test::Truth;
    bool negate = false;
  };
  static std::optional<CondShape> cond_shape(const Tree& t, NodeId if_stmt) {
    return shape_of(t, t.field(if_stmt, F::Condition));
  }
  static std::optional<CondShape> shape_of(const Tree& t, NodeId cond) {
    while (cond != kNone && t.is(cond, K::ParenthesizedExpression)) cond = t.first_named_child(cond);
    if (cond == kNone) return std::nullopt;
    CondShape s;
    s.subject = cond;
    if (t.is(cond, K::NotOperator)) {
      s.negate = true;
      s.subject = t.field(cond, F::Argument);
    } else if (t.is(cond, K::ComparisonOperator)) {
      auto kids = t.named_children(cond);
      if (kids.size() != 2 || !t.is(kids[1], K::None)) return std::nullopt;
      std::string_view op = t.operator_text(cond);
      if (op == "is") s.test = CondShape::Test::IsNone;
      else if (op == "is not" || op == "isnot") s.test = CondShape::Test::IsNotNone;
      else return std::nullopt;
      s.subject = kids[0];
    }
    if (s.subject == kNone || !(t.is(s.subject, K::Identifier) || t.is(s.subject, K::Attribute))) return std::nullopt;
    return s;
  }

  // A candidate `if` of a function whose subject find_dead_branches can follow, and how: a
  // parameter of the function (or of its class's `__init__`, for `self.flag` set once there from
  // it), whose values depend on the program, or a value fixed in `__init__`. The same in every
  // program, so computed once per reached function (dead_plans_).
  struct DeadPlan {
    NodeId if_stmt = kNone;
    CondShape shape;
    bool from_param = false;  // values: param_values(p, param); else `fixed`
    ParamSource param;
    ValueSet fixed;
  };
  std::vector<std::vector<DeadPlan>> dead_plans_;  // per function id

  // Branches guarded by a parameter (`if flag:`, `if not flag:`, `if x is None:`) that every
  // caller in the program fixes so that the branch cannot run: f's plans. Only plain module-level
  // functions (their callers are all visible as calls) and methods whose `self.flag` is set once in
  // `__init__`, from such a parameter or to a value fixed there.
  // What dead_plans() may plan for at all: neither nested nor decorated (a decorator may call the
  // function any way it likes). Its candidate ifs are found for these functions alone.
  static bool may_plan(const Function& f) { return !f.outer && f.decorators.empty(); }
  std::vector<DeadPlan> dead_plans(const Function& f) const {
    std::vector<DeadPlan> out;
    if (if_candidates_[f.id].empty() || !may_plan(f)) return out;
    auto plain_calls = [&](const Function* g) { return !pm.fn_referenced_[g->id] && !pm.callers_of(g).empty(); };
    // a plain function's parameters, when all its callers are calls; a method's `self.flag`,
    // set once in `__init__` from its parameter, when all instances come from class calls
    bool params = !f.cls && plain_calls(&f);
    bool attrs = false;
    if (f.cls && !pm.class_has_subclass_.count(f.cls) && !pm.class_referenced_.count(f.cls))
      if (const Function* i = f.cls->find_method("__init__"); i && i->cls == f.cls && plain_calls(i)) attrs = true;
    if (!params && !attrs) return out;
    const Tree& t = f.mod->tree;
    for (NodeId n : if_candidates_[f.id]) {
      auto shape = cond_shape(t, n);
      if (!shape) continue;
      DeadPlan plan;
      plan.if_stmt = n;
      plan.shape = *shape;
      NodeId subject = shape->subject;
      if (params && t.is(subject, K::Identifier)) {
        plan.from_param = true;
        plan.param = param_source(f, t.text(subject));
      } else if (attrs && t.is(subject, K::Attribute)) {
        NodeId obj = t.field(subject, F::Object), attr = t.field(subject, F::Attribute);
        if (obj == kNone || attr == kNone || !t.is(obj, K::Identifier) || t.text(obj) != "self") continue;
        const Function* init = nullptr;
        NodeId v = set_once_in_init(*f.cls, t.text(attr), &init);
        if (v == kNone) continue;
        const Tree& it_ = init->mod->tree;
        if (it_.is(v, K::Identifier)) {
          plan.from_param = true;
          plan.param = param_source(*init, it_.text(v));
        } else {
          plan.fixed = pm.eval(*init->mod, v);
        }
      } else {
        continue;  // values unknown
      }
      // values unknown in every program: no branch of this `if` is ever dead
      if (plan.from_param ? plan.param.unknown : plan.fixed.unknown || plan.fixed.values.empty()) continue;
      out.push_back(std::move(plan));
    }
    return out;
  }

  // Program `p`'s dead branches (Program::dead_branches), from the plans of the functions it
  // reaches. Returns whether any was found.
  bool find_dead_branches(Program& p) const {
    bool any = false;
    for (uint32_t id : p.reached_ids) {
      const std::vector<DeadPlan>& plans = dead_plans_[id];
      if (plans.empty()) continue;
      const Function* f = pm.functions_[id];
      const Tree& t = f->mod->tree;
      for (const DeadPlan& plan : plans) {
        ValueSet from_calls;
        if (plan.from_param) from_calls = param_values(p, plan.param);
        if (auto dead = dead_parts(t, plan.if_stmt, plan.shape, plan.from_param ? from_calls : plan.fixed); !dead.empty()) {
          auto& v = p.dead_branches[f->mod];
          v.insert(v.end(), dead.begin(), dead.end());
          any = true;
        }
      }
    }
    return any;
  }

  // The parts of `if_stmt` that cannot run when its subject takes the values `vs`: its
  // consequence when the condition is always false, its elif/else clauses when it is always true.
  static std::vector<NodeId> dead_parts(const Tree& t, NodeId if_stmt, const CondShape& shape, const ValueSet& vs) {
    if (vs.unknown || vs.values.empty()) return {};
    bool all_true = true, all_false = true;
    for (auto& l : vs.values) {
      bool v = shape.test == CondShape::Test::Truth    ? vs.is_truthy_literal(l)
             : shape.test == CondShape::Test::IsNone ? l.kind == Literal::Kind::None
                                                      : l.kind != Literal::Kind::None;
      if (shape.negate) v = !v;
      (v ? all_false : all_true) = false;
    }
    std::vector<NodeId> out;
    if (all_false) {
      if (NodeId body = t.field(if_stmt, F::Consequence); body != kNone) out.push_back(body);
    } else if (all_true) {
      for (NodeId c : t.named_child_range(if_stmt))
        if (t.is(c, K::ElifClause) || t.is(c, K::ElseClause)) out.push_back(c);
    }
    return out;
  }

  // A mark per function and per class, and the functions whose calls a dead branch of the
  // program filters: one per thread and walk (a hub's, a program's first and second), reused by
  // the walks it serves and cleared after each through the lists of ids it set.
  struct ReachScratch {
    std::vector<char> mark, affected, seen_cls;
    std::vector<uint32_t> work, cls_stack;
  };
  // What program `p` reaches (Program::reached_ids, reached_class_ids). With a hub (one of its
  // members, its walk made with the same dead branches as `p` has), the walk starts from what the
  // hub reaches, already closed, and reads the seeds of the members outside the hub's closure.
  void reach_program(Program& p, const std::vector<std::vector<Ref>>& fn_refs,
                     const std::vector<std::vector<Function*>>& nested, ReachScratch& scratch, const Hub* hub) {
    std::vector<char>& mark = scratch.mark;
    std::vector<char>& affected = scratch.affected;
    std::vector<char>& seen_cls = scratch.seen_cls;
    if (mark.size() != pm.functions_.size()) mark.assign(pm.functions_.size(), 0);
    if (affected.size() != pm.functions_.size()) affected.assign(pm.functions_.size(), 0);
    if (seen_cls.size() != pm.classes_.size()) seen_cls.assign(pm.classes_.size(), 0);
    std::vector<uint32_t>& work = scratch.work;
    std::vector<uint32_t>& cls_stack = scratch.cls_stack;
    std::vector<uint32_t> ids, cls_ids;
    auto add_fn = [&](uint32_t f) {
      if (f == kNoId || mark[f]) return;
      mark[f] = 1;
      ids.push_back(f);
      work.push_back(f);
    };
    // a class reached: its methods may run, and its bases' (each class once per program)
    auto add_cls = [&](uint32_t c) {
      if (c == kNoId || seen_cls[c]) return;
      seen_cls[c] = 1;
      cls_ids.push_back(c);
      cls_stack.push_back(c);
      while (!cls_stack.empty()) {
        uint32_t k = cls_stack.back();
        cls_stack.pop_back();
        for (uint32_t f : class_methods_[k]) add_fn(f);
        for (uint32_t b : class_bases_[k])
          if (!seen_cls[b]) {
            seen_cls[b] = 1;
            cls_ids.push_back(b);
            cls_stack.push_back(b);
          }
      }
    };
    if (hub) {
      for (uint32_t f : hub->fns) mark[f] = 1;
      ids = hub->fns;
      for (uint32_t c : hub->classes) seen_cls[c] = 1;
      cls_ids = hub->classes;
    }
    for (Module* m : p.members) {
      bool entry = m == p.entry;
      if (!entry && hub && (hub->modules[m->index / 64] >> (m->index % 64) & 1)) continue;
      const ModuleSeeds& seeds = seeds_[m->index];
      for (const Seed& c : seeds.calls) {
        if (!entry && c.guarded) continue;
        if (p.in_dead_branch(*m, c.node)) continue;
        add_fn(c.fn);
        add_cls(c.cls);
      }
      for (const Seed& r : seeds.refs)
        if (entry || !r.guarded) {
          add_fn(r.fn);
          add_cls(r.cls);
        }
      for (uint32_t f : seeds.registered_fns) add_fn(f);
      for (uint32_t c : seeds.registered_classes) add_cls(c);
      // an entry script that only defines things is a library linted on its own: its callers
      // are outside the analysis
      if (entry && seeds.library_like) {
        for (auto& f : m->functions) add_fn(f->id);
        for (auto& c : m->classes) add_cls(c->id);
      }
    }
    // Only the functions a dead branch overlaps (it lies in them, or they lie in it) must have
    // their calls filtered; every other function leads where it always does.
    std::vector<uint32_t> filtered;
    for (auto& [m, branches] : p.dead_branches)
      for (auto& g : m->functions)
        for (NodeId b : branches)
          if (m->tree.contains(g->def, b) || m->tree.contains(b, g->def)) {
            if (!affected[g->id]) filtered.push_back(g->id);
            affected[g->id] = 1;
            break;
          }
    while (!work.empty()) {
      uint32_t f = work.back();
      work.pop_back();
      if (!affected[f]) {  // no call of it is in a dead branch: where it leads, deduplicated once
        for (uint32_t g : succ_fns_[f]) add_fn(g);
        for (uint32_t c : succ_classes_[f]) add_cls(c);
        continue;
      }
      const Function& fn = *pm.functions_[f];
      for (uint32_t ci : fn.calls) {
        const Call& c = fn.mod->calls[ci];
        if (p.in_dead_branch(*fn.mod, c.node)) continue;
        add_fn(id_of(c.target));
        add_cls(id_of(c.target_class));
      }
      for (auto& r : fn_refs[f]) {
        add_fn(id_of(r.fn));
        add_cls(id_of(r.cls));
      }
      for (Function* g : nested[f]) add_fn(g->id);
    }
    for (uint32_t id : filtered) affected[id] = 0;
    // `v` sorted and its marks cleared. A hub's ids are sorted, and what the walk added after them
    // is sorted and merged in; where the walk added many, the marks are read in order instead
    // (sorting them was 3% of a cached run after an edit: 270 programs on the torch package).
    auto sort_and_clear = [](std::vector<uint32_t>& v, size_t sorted, std::vector<char>& marks) {
      if ((v.size() - sorted) * 64 > marks.size()) {
        v.clear();
        const size_t n = marks.size();
        size_t id = 0;
        for (; id + 8 <= n; id += 8) {  // eight marks at a time: most words of them are clear
          uint64_t w;
          std::memcpy(&w, marks.data() + id, 8);
          if (w == 0) continue;
          for (size_t k = 0; k < 8; ++k)
            if (marks[id + k]) v.push_back(static_cast<uint32_t>(id + k));
          std::memset(marks.data() + id, 0, 8);
        }
        for (; id < n; ++id)
          if (marks[id]) {
            v.push_back(static_cast<uint32_t>(id));
            marks[id] = 0;
          }
        return;
      }
      for (uint32_t id : v) marks[id] = 0;
      std::sort(v.begin() + static_cast<std::ptrdiff_t>(sorted), v.end());
      std::inplace_merge(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(sorted), v.end());
    };
    sort_and_clear(ids, hub ? hub->fns.size() : 0, mark);
    sort_and_clear(cls_ids, hub ? hub->classes.size() : 0, seen_cls);
    p.reached_bits.clear();
    if (ids.size() * 32 > pm.functions_.size()) {  // dense: a bit per function is smaller and faster
      p.reached_bits.assign((pm.functions_.size() + 63) / 64, 0);
      for (uint32_t id : ids) p.reached_bits[id / 64] |= uint64_t{1} << (id % 64);
    }
    p.reached_ids = std::move(ids);
    p.reached_class_ids = std::move(cls_ids);
  }

  // ---- accelerator intent (TL303) --------------------------------------------------------
  // Does `s` hold, in any case, "cuda", "cudnn", "nccl", "gpu" or "torch.accelerator"? One pass over
  // `s` (every identifier and short string of every module goes through here): the first letter
  // picks the words worth comparing.
  static bool intent_text(std::string_view s) {
    auto at = [&](size_t i, std::string_view w) {
      if (s.size() - i < w.size()) return false;
      for (size_t k = 1; k < w.size(); ++k)
        if (ascii_lower(s[i + k]) != w[k]) return false;
      return true;
    };
    for (size_t i = 0; i + 3 <= s.size(); ++i) {
      switch (ascii_lower(s[i])) {
        case 'c':
          if (at(i, "cuda") || at(i, "cudnn")) return true;
          break;
        case 'n':
          if (at(i, "nccl")) return true;
          break;
        case 'g':
          if (at(i, "gpu")) return true;
          break;
        case 't':
          if (at(i, "torch.accelerator")) return true;
          break;
        default:
          break;
      }
    }
    return false;
  }
  // Nodes of `m` that show the program expects an accelerator.
  std::vector<NodeId> intent_sites(const Module& m) const {
    std::vector<NodeId> out;
    const Tree& t = m.tree;
    for (NodeId n = 0; n < t.size(); ++n) {
      K k = t.kind(n);
      if (k == K::Identifier) {
        // torch.cuda..., use_cuda, args.gpu, n_gpu, cudnn, torch.accelerator
        auto s = t.text(n);
        if (intent_text(s) || s == "accelerator") {
          NodeId p = t.parent(n);
          if (s == "accelerator" && !(p != kNone && t.is(p, K::Attribute) && t.text(p).starts_with("torch.accelerator")))
            continue;
          out.push_back(n);
        }
      } else if (k == K::String) {
        auto s = t.text(n);
        if (s.size() > 60) continue;
        std::string v = string_literal_value(t, n);
        if (icontains(v, "cuda") || icontains(v, "nccl") || v == "mps" || v == "xpu") {
          out.push_back(n);
          continue;
        }
        // a command-line option: --gpu, --gpus, --gpu-ids, --device, --no-cuda
        if (v.starts_with("-") && (icontains(v, "gpu") || icontains(v, "device") || icontains(v, "cuda")))
          out.push_back(n);
      }
    }
    return out;
  }

  void intent(unsigned threads) {
    // A module's sites are found when a program first asks for them: a program stops at its first
    // site that runs, so most members of most programs are never scanned (every identifier and
    // short string of a module goes through intent_text()).
    std::vector<std::vector<NodeId>> sites(pm.modules_.size());
    std::unique_ptr<std::once_flag[]> scanned(new std::once_flag[pm.modules_.size()]);
    auto sites_of = [&](const Module& m) -> const std::vector<NodeId>& {
      std::call_once(scanned[m.index], [&] { sites[m.index] = intent_sites(m); });
      return sites[m.index];
    };
    parallel_for(pm.programs_.size(), threads, [&](size_t pi) {  // a program writes only its own flag
      Program& p = pm.programs_[pi];
      for (Module* m : p.members) {
        for (NodeId n : sites_of(*m))
          if (pm.runs_in_program(p, *m, n)) {
            p.accelerator_intent = true;
            break;
          }
        if (p.accelerator_intent) break;
      }
    });
  }

  // ---- CUDA initialisation in execution order (TL302) ------------------------------------
  struct Walk {
    ProgramModel& pm;
    const Call* init = nullptr;            // the call that surely initialised CUDA on this path
    std::vector<uint8_t>& seen;            // per function: states (init known, conditional) walked
    std::vector<const Call*>& effect;      // per function: the init it performs when called unconditionally
    std::vector<uint32_t>& touched;        // the functions whose entries are set, to clear them after
  };

  // Is `n` inside a branch, loop, handler, nested def or lambda between it and `top`? The entry
  // script's `if __name__ == "__main__":` runs unconditionally.
  static bool conditional(const Module& m, NodeId n, NodeId top) {
    const Tree& t = m.tree;
    for (NodeId p = t.parent(n); p != kNone && p != top; p = t.parent(p)) {
      switch (t.kind(p)) {
        case K::IfStatement:
          if (std::find(m.main_guards.begin(), m.main_guards.end(), p) != m.main_guards.end()) break;
          return true;
        case K::ElifClause: case K::ElseClause: case K::ExceptClause: case K::CaseClause:
        case K::ConditionalExpression: case K::BooleanOperator: case K::FunctionDefinition: case K::Lambda:
        case K::ClassDefinition: case K::WhileStatement:
          return true;
        default: break;
      }
    }
    return false;
  }

  // A body's calls as every program's walk reads them (a function's, or a module's top level):
  // in evaluation order (arguments, which end first, before the call that takes them), each with
  // whether it runs only conditionally within the body, whether it lies under the main guard (top
  // level) and whether it initialises CUDA. Made on the first walk of the body, kept for the
  // other programs (the torch package's 270 programs walked 92,739 module top levels).
  struct OrderedCall {
    const Call* call;
    bool cond, in_main, inits_cuda;
  };
  const std::vector<OrderedCall>& ordered_calls(const Module& m, const Function* f) {
    std::vector<OrderedCall>& out = f ? fn_order_[f->id] : top_order_[m.index];
    char& done = f ? fn_order_done_[f->id] : top_order_done_[m.index];
    if (done) return out;
    done = 1;
    std::vector<const Call*> cs;
    if (f) {
      for (uint32_t ci : f->calls) cs.push_back(&m.calls[ci]);
    } else {
      for (auto& c : m.calls)
        if (!c.fn) cs.push_back(&c);
    }
    // (two calls never end at the same byte; the node breaks a tie all the same)
    std::sort(cs.begin(), cs.end(), [&](const Call* a, const Call* b) {
      uint32_t ea = m.tree[a->node].end, eb = m.tree[b->node].end;
      return ea != eb ? ea < eb : a->node < b->node;
    });
    NodeId top = f ? f->body : m.tree.root();
    out.reserve(cs.size());
    for (const Call* c : cs)
      out.push_back({c, conditional(m, c->node, top), !f && in_main_guard(m, c->node), pm.initialises_cuda(m, *c)});
    return out;
  }
  std::vector<std::vector<OrderedCall>> fn_order_, top_order_;  // per function id, per module index
  std::vector<char> fn_order_done_, top_order_done_;

  void walk_body(Walk& w, const Module& m, const Function* f, bool cond, bool skip_main, int depth) {
    for (const OrderedCall& oc : ordered_calls(m, f)) {
      if (skip_main && oc.in_main) continue;
      bool cnd = cond || oc.cond;
      if (oc.call->target && depth < 10) enter(w, oc.call->target, cnd, depth + 1);
      if (!cnd && !w.init && oc.inits_cuda) w.init = oc.call;
    }
  }

  void enter(Walk& w, const Function* f, bool cond, int depth) {
    if (f->body == kNone) return;
    uint8_t state = static_cast<uint8_t>(1u << ((w.init ? 1 : 0) | (cond ? 2 : 0)));
    // only an unconditional entry surely comes after the initialisation (a validation helper
    // that calls `select_device` only when it runs on its own is not entered that way)
    if (w.init && !cond && !pm.cuda_init_at_entry_[f->id]) pm.cuda_init_at_entry_[f->id] = w.init;
    if (w.seen[f->id] & state) {
      if (!w.init && !cond && w.effect[f->id]) w.init = w.effect[f->id];
      return;
    }
    if (!w.seen[f->id]) w.touched.push_back(f->id);
    w.seen[f->id] |= state;
    bool was_init = w.init != nullptr;
    walk_body(w, *f->mod, f, cond, false, depth);
    if (!was_init && !cond && w.init) w.effect[f->id] = w.init;
  }

  void cuda_order() {
    pm.cuda_init_at_entry_.assign(pm.functions_.size(), nullptr);
    fn_order_.assign(pm.functions_.size(), {});
    fn_order_done_.assign(pm.functions_.size(), 0);
    top_order_.assign(pm.modules_.size(), {});
    top_order_done_.assign(pm.modules_.size(), 0);
    // scratch per function, shared by the programs: cleared through `touched`, so that the work
    // grows with what each program walks, not programs x functions
    std::vector<uint8_t> seen(pm.functions_.size(), 0);
    std::vector<const Call*> effect(pm.functions_.size(), nullptr);
    std::vector<uint32_t> touched;
    for (auto& p : pm.programs_) {
      if (!p.entry || p.entry->is_test) continue;
      for (uint32_t id : touched) {  // the previous program's marks
        seen[id] = 0;
        effect[id] = nullptr;
      }
      touched.clear();
      Walk w{pm, nullptr, seen, effect, touched};
      // imported modules' top levels run first (at their imports), then the entry script
      for (Module* m : p.members)
        if (m != p.entry) walk_body(w, *m, nullptr, false, true, 0);
      walk_body(w, *p.entry, nullptr, false, false, 0);
    }
  }

  // ---- device values (accelerator facts) ---------------------------------------------------
  int device_value(const Program& p, const Module& m, NodeId e, int depth) const {
    const Tree& t = m.tree;
    if (e == kNone || depth > 5) return -1;
    while (t.is(e, K::ParenthesizedExpression)) e = t.first_named_child(e);
    if (e == kNone) return -1;
    if (mentions_accelerator(t, e)) return 1;
    if (t.is(e, K::String)) return string_literal_value(t, e).empty() ? -1 : 0;  // "cpu", "meta"
    if (t.is(e, K::None)) return 0;  // the default device
    auto combine = [](int a, int b) { return a == 1 || b == 1 ? 1 : (a == -1 || b == -1 ? -1 : 0); };
    if (t.is(e, K::Call)) {
      const Call* c = m.call_at(e);
      if (c && c->qname == "torch.device") {
        NodeId a = pm.positional_arg(m, *c, 0);
        if (a == kNone) a = pm.keyword_arg(m, *c, "type");
        return device_value(p, m, a, depth + 1);
      }
      return -1;
    }
    if (t.is(e, K::Attribute)) {
      // self.x set once, in __init__
      NodeId obj = t.field(e, F::Object), attr = t.field(e, F::Attribute);
      if (obj == kNone || attr == kNone || !t.is(obj, K::Identifier) || t.text(obj) != "self") return -1;
      const Function* f = m.enclosing_function(e);
      if (!f || !f->cls) return -1;
      const Function* init = nullptr;
      NodeId v = set_once_in_init(*f->cls, t.text(attr), &init);
      return v == kNone ? -1 : device_value(p, *init->mod, v, depth + 1);
    }
    if (!t.is(e, K::Identifier)) return -1;
    const auto* bs = pm.bindings_of(m, e);
    if (!bs || bs->empty()) return -1;
    int out = 0;
    for (auto& b : *bs) {
      if (b.kind == Binding::Kind::Assign && b.whole && b.value != kNone) {
        out = combine(out, device_value(p, m, b.value, depth + 1));
        continue;
      }
      if (b.kind != Binding::Kind::Param) return -1;
      const Function* f = m.enclosing_function(e);
      if (!f || f->outer || f->id >= pm.fn_referenced_.size() || !f->decorators.empty() ||
          (f->cls && f->name != "__init__"))
        return -1;
      // handed on as a value (a layer class passed as a factory): its calls are not visible, and
      // its default is the evidence, as for a function no call of the program reaches
      bool hidden_callers = pm.fn_referenced_[f->id] || (f->cls && pm.class_referenced_.count(f->cls));
      std::string_view name = t.text(e);
      int idx = positional_index(*f, name);
      size_t runs = 0;
      for (const Call* c : hidden_callers ? std::vector<const Call*>{} : pm.callers_of(f)) {
        const Module& cm = *c->mod;
        if (!pm.runs_in_program(p, cm, c->node)) continue;
        ++runs;
        if (pm.has_splat(cm, *c)) return -1;
        size_t implicit = ProgramModel::implicit_args(*c, *f);
        NodeId arg = pm.keyword_arg(cm, *c, name);
        if (arg == kNone && idx >= 0 && static_cast<size_t>(idx) >= implicit)
          arg = pm.positional_arg(cm, *c, static_cast<size_t>(idx) - implicit);
        int v = arg != kNone ? device_value(p, cm, arg, depth + 1)
                             : (b.default_value != kNone ? device_value(p, m, b.default_value, depth + 1) : -1);
        out = combine(out, v);
        if (out == -1) return -1;
      }
      // no call of the program passes it: code outside the analysis may, with its default as
      // the best evidence
      if (!runs) out = combine(out, b.default_value != kNone ? device_value(p, m, b.default_value, depth + 1) : -1);
      if (out == -1) return -1;
    }
    return out;
  }

};

void mark_test_modules(ProgramModel& pm) { ProgramReach{pm}.mark_test_modules(); }
void set_reach_hubs(bool on) { g_reach_hubs.store(on); }

void compute_reachability(ProgramModel& pm, unsigned threads) { ProgramReach{pm}.reachability(threads); }
void compute_accelerator_intent(ProgramModel& pm, unsigned threads) { ProgramReach{pm}.intent(threads); }
void compute_cuda_init_order(ProgramModel& pm) { ProgramReach{pm}.cuda_order(); }
bool call_rules_out(const ProgramModel& pm, const Call& c, const Function& f, NodeId node) {
  return ProgramReach{const_cast<ProgramModel&>(pm)}.call_rules_out(c, f, node);
}
int device_on_accelerator(const ProgramModel& pm, const Program& p, const Module& m, NodeId e) {
  return ProgramReach{const_cast<ProgramModel&>(pm)}.device_value(p, m, e, 0);
}

bool Program::in_dead_branch(const Module& m, NodeId n) const {
  if (dead_branches.empty()) return false;
  auto it = dead_branches.find(&m);
  if (it == dead_branches.end()) return false;
  for (NodeId b : it->second)
    if (m.tree.contains(b, n)) return true;
  return false;
}

bool ProgramModel::runs_in_program(const Program& p, const Module& m, NodeId node) const {
  if (const Function* f = m.enclosing_function(node)) return p.reaches(f) && !p.in_dead_branch(m, node);
  bool member = false;
  for (uint32_t id : m.programs) member |= id == p.id;
  if (!member) return false;
  return &m == p.entry || !in_main_guard(m, node);
}

bool ProgramModel::initialises_cuda(const Module& m, const Call& c) const {
  std::string_view q = c.qname;
  if (q == "torch.cuda.set_device" || q == "torch.cuda.synchronize" || q == "torch.cuda.init" ||
      q == "torch.cuda.current_device" || q == "torch.cuda.get_device_name" || q == "torch.cuda.mem_get_info" ||
      q == "torch.cuda.get_device_properties")
    return true;
  if (c.method == "cuda" && c.receiver != kNone) return true;
  if (c.method == "to" && c.receiver != kNone) {
    NodeId d = positional_arg(m, c, 0);
    if (d == kNone) d = keyword_arg(m, c, "device");
    if (d != kNone && is_accelerator_device(m, d)) return true;
  }
  if (q.starts_with("torch.")) {
    NodeId d = keyword_arg(m, c, "device");
    if (d != kNone && mentions_accelerator(m.tree, d)) return true;
  }
  return false;
}

}  // namespace tl::py
