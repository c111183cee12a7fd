// How a DataLoader's dataset holds its samples (rules/docs/TL201): in memory (a TensorDataset, or
// a Dataset whose __getitem__ only indexes or returns values built in __init__), or live state
// of the training process (an IterableDataset that reads a replay buffer, steps an environment
// or calls the model). Worker processes help neither: the first gains no overlap, the second would
// iterate stale copies.
#include <algorithm>
#include <functional>
#include <string>
#include <unordered_set>

#include "analyzer/python/model.h"

namespace tl::py {

namespace {

using DS = ProgramModel::DatasetStorage;

bool in_memory_dataset(std::string_view q) {
  if (q == "torch.utils.data.TensorDataset" || q == "torch.utils.data.dataset.TensorDataset") return true;
  // Library datasets known to hold their samples as tensors built at construction: Lightning's
  // demo datasets (WikiText2 keeps the whole corpus as one token tensor and slices it; the random
  // datasets keep `torch.randn` data).
  for (std::string_view prefix : {"lightning.pytorch.demos.", "pytorch_lightning.demos.", "lightning.fabric.demos."})
    if (q.starts_with(prefix)) {
      std::string_view last = q.substr(q.rfind('.') + 1);
      return last == "WikiText2" || last == "RandomDataset" || last == "RandomDictDataset" ||
             last == "RandomIterableDataset" || last == "RandomIterableDatasetWithLen";
    }
  return false;
}
// Wrappers whose samples are those of their first argument.
bool is_subset_wrapper(std::string_view q) {
  return q == "torch.utils.data.Subset" || q == "torch.utils.data.dataset.Subset" ||
         q == "torch.utils.data.random_split" || q == "torch.utils.data.dataset.random_split";
}

// `self.X` inside a method: X, else empty.
std::string_view self_attr(const Tree& t, NodeId e) {
  if (e == kNone || !t.is(e, K::Attribute)) return {};
  NodeId o = t.field(e, F::Object), a = t.field(e, F::Attribute);
  if (o == kNone || a == kNone || !t.is(o, K::Identifier) || t.text(o) != "self") return {};
  return t.text(a);
}

// Calls that only convert an in-memory sample (no I/O, no decoding, no transform).
bool conversion_call(const Call& c) {
  static const std::unordered_set<std::string_view> fns = {
      "torch.tensor", "torch.as_tensor", "torch.from_numpy", "torch.Tensor", "torch.LongTensor", "torch.FloatTensor",
      "numpy.asarray", "numpy.array", "builtins.int", "builtins.float", "builtins.len", "builtins.tuple",
      "builtins.dict", "builtins.list"};
  if (fns.count(c.qname)) return true;
  if (c.receiver == kNone || !c.qname.empty() || c.target) return false;
  static const std::unordered_set<std::string_view> methods = {
      "float", "long", "int", "double", "half", "bool", "to", "clone", "unsqueeze", "squeeze", "view", "reshape",
      "type", "copy", "astype", "contiguous", "permute", "transpose", "flatten"};
  return methods.count(c.method) > 0;
}

// Storage that reads from disk when indexed (h5py datasets, LMDB, zarr, memory-mapped arrays).
bool lazy_storage(const Module& m, NodeId v) {
  const Tree& t = m.tree;
  if (v == kNone) return false;
  for (NodeId n = v; n < t[v].subtree_end; ++n) {
    if (t.is(n, K::KeywordArgument)) {
      NodeId k = t.field(n, F::Name);
      if (k != kNone && t.text(k) == "mmap_mode") return true;
    }
    if (!t.is(n, K::Call)) continue;
    const Call* c = m.call_at(n);
    if (!c) continue;
    for (std::string_view p : {"h5py.", "lmdb.", "zarr.", "tables.", "numpy.memmap", "datasets.load_dataset"})
      if (c->qname.starts_with(p)) return true;
  }
  return false;
}

// Does `fn` (a `.map` function: an analysed def or a lambda) tokenize text: call a tokenizer
// (`tokenizer(...)`, `tokenizer.encode`, `self.tokenizer.apply_chat_template`, a `tokenize_fn`),
// directly or through the analysed functions it calls (two levels)?
bool tokenizes(const ProgramModel& pm, const Module& m, NodeId fn) {
  const Tree& t = m.tree;
  if (fn == kNone) return false;
  auto named_tokenizer = [](const Module& mm, const Call& c) {
    if (c.callee == kNone) return false;
    return icontains(dotted_text(mm.tree, c.callee), "tokeniz") || icontains(c.qname, "tokeniz");
  };
  std::function<bool(const Function&, int)> through = [&](const Function& f, int depth) {
    for (uint32_t ci : f.calls) {
      const Call& c = f.mod->calls[ci];
      if (named_tokenizer(*f.mod, c)) return true;
      if (depth < 2 && c.target && c.target != &f && through(*c.target, depth + 1)) return true;
    }
    return false;
  };
  if (t.is(fn, K::Lambda)) {
    for (NodeId n = fn; n < t[fn].subtree_end; ++n)
      if (t.is(n, K::Call))
        if (const Call* c = m.call_at(n); c && (named_tokenizer(m, *c) || (c->target && through(*c->target, 1))))
          return true;
    return false;
  }
  const Function* f = pm.resolve_function(m, fn);
  return f && through(*f, 0);
}

// Methods of a `datasets` table that return a table with the same rows' contents (or a part of
// them): a tokenized table stays one through them.
bool keeps_rows(std::string_view method) {
  static const std::unordered_set<std::string_view> ms = {
      "map", "filter", "select", "shuffle", "train_test_split", "with_format", "remove_columns", "rename_column",
      "rename_columns", "select_columns", "sort", "flatten_indices", "shard", "skip", "take", "cast", "cast_column"};
  return ms.count(method) > 0;
}

// Does the module transform a table's rows when they are read (`set_transform`, `with_transform`)?
// Then reading a row runs that code, which workers would overlap.
bool transforms_on_read(const Module& m) {
  for (const Call& c : m.calls)
    if (c.receiver != kNone && (c.method == "set_transform" || c.method == "with_transform")) return true;
  return false;
}

// The class and its analysed bases, nearest first (at most 8).
std::vector<const Class*> lineage_of(const Class& c) {
  std::vector<const Class*> lineage{&c};
  for (size_t i = 0; i < lineage.size() && lineage.size() < 8; ++i)
    for (const Class* b : lineage[i]->local_bases)
      if (std::find(lineage.begin(), lineage.end(), b) == lineage.end()) lineage.push_back(b);
  return lineage;
}

// The values `f`'s own return statements give (a nested function's are not `f`'s); kNone for a
// bare `return`.
std::vector<NodeId> return_values(const Function& f) {
  std::vector<NodeId> rets;
  if (f.body == kNone) return rets;
  const Tree& ft = f.mod->tree;
  for (NodeId n = f.body; n < ft[f.body].subtree_end; ++n)
    if (ft.is(n, K::ReturnStatement) && f.mod->enclosing_function(n) == &f) rets.push_back(ft.first_named_child(n));
  return rets;
}

// True when the class, an analysed base, or a function their methods call mentions worker
// processes: `get_worker_info()`, a name or attribute containing `worker` (`self.worker_id` set by
// a `worker_init_fn`, `num_workers`), or a library sharding helper (`split_by_worker`).
bool worker_aware(const Class& c) {
  std::vector<const Function*> fns;
  for (const Class* k : lineage_of(c))
    for (auto& [name, f] : k->methods) fns.push_back(f);
  for (size_t i = 0, n = fns.size(); i < n; ++i)
    for (uint32_t ci : fns[i]->calls) {
      const Call& call = fns[i]->mod->calls[ci];
      if (call.target && std::find(fns.begin(), fns.end(), call.target) == fns.end() && fns.size() < 64)
        fns.push_back(call.target);
    }
  for (const Function* f : fns) {
    if (f->body == kNone) continue;
    const Tree& t = f->mod->tree;
    for (NodeId n = f->body; n < t[f->body].subtree_end; ++n)
      if (t.is(n, K::Identifier) && icontains(t.text(n), "worker")) return true;
  }
  return false;
}

}  // namespace

ProgramModel::DatasetStorage ProgramModel::class_dataset_storage(const Class& c) const {
  if (c.derives_from({"torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset"})) return DS::InMemory;
  const Module& m = *c.mod;
  const Tree& t = m.tree;
  Function* init = c.find_method("__init__");
  // For `self.X = x` with x a parameter of __init__: each argument its callers pass for x.
  auto init_args = [&](NodeId v, auto&& each) {
    if (!init || !t.is(v, K::Identifier)) return;
    size_t idx = 0;
    while (idx < init->params.size() && init->params[idx] != t.text(v)) ++idx;
    if (idx == init->params.size() || idx == 0) return;
    for (const Call* caller : callers_of(init)) {
      NodeId arg = keyword_arg(*caller->mod, *caller, t.text(v));
      if (arg == kNone && !has_splat(*caller->mod, *caller)) arg = positional_arg(*caller->mod, *caller, idx - 1);
      if (arg != kNone) each(*caller->mod, arg);
    }
  };
  // State that other methods add to (a replay buffer's push) and that the iteration path reads.
  Function* iter = c.find_method("__iter__");
  if (!iter) iter = c.find_method("__next__");
  if (iter && iter->cls) {
    // the iteration path: __iter__/__next__ and the methods of the class they call
    std::vector<const Function*> path{iter};
    if (Function* nx = c.find_method("__next__"); nx && nx != iter) path.push_back(nx);
    for (size_t i = 0; i < path.size() && path.size() < 12; ++i)
      for (uint32_t ci : path[i]->calls) {
        const Call& call = path[i]->mod->calls[ci];
        if (call.target && call.target->cls == path[i]->cls &&
            std::find(path.begin(), path.end(), call.target) == path.end())
          path.push_back(call.target);
      }
    std::unordered_set<std::string_view> changed;  // self.X mutated by the training process
    auto mutating = [](std::string_view meth) {
      return meth == "append" || meth == "extend" || meth == "appendleft" || meth == "push" || meth == "insert" ||
             meth == "add" || meth == "update" || meth == "put" || meth == "__setitem__";
    };
    for (const Class* k : lineage_of(c))
      for (auto& [name, f] : k->methods) {
        if (name == "__init__" || std::find(path.begin(), path.end(), f) != path.end() || f->body == kNone) continue;
        const Tree& ft = f->mod->tree;
        for (NodeId n = f->body; n < ft[f->body].subtree_end; ++n) {
          // a ring buffer's `self.memory[self.pos] = transition` (a plain re-assignment such as
          // `set_epoch` is configuration, not live state)
          if (ft.is(n, K::Assignment)) {
            NodeId l = ft.field(n, F::Left);
            if (l != kNone && ft.is(l, K::Subscript)) {
              std::string_view a = self_attr(ft, ft.field(l, F::Value));
              if (!a.empty()) changed.insert(a);
            }
          }
        }
        for (uint32_t ci : f->calls) {
          const Call& call = f->mod->calls[ci];
          std::string_view a = self_attr(ft, call.receiver);
          if (!a.empty() && mutating(call.method)) changed.insert(a);
        }
      }
    // The object held in self.X: its analysed class, from `self.X = Cls(...)` or from the
    // argument that __init__'s callers pass for the parameter X was bound from.
    auto held_classes = [&](std::string_view attr) {
      std::vector<const Class*> out;
      auto it = c.attr_values.find(attr);
      if (it == c.attr_values.end()) return out;
      for (NodeId v : it->second) {
        if (v == kNone) continue;
        if (t.is(v, K::Call)) {
          if (const Call* vc = m.call_at(v); vc && vc->target_class) out.push_back(vc->target_class);
          continue;
        }
        init_args(v, [&](const Module& cm, NodeId arg) {
          if (const Class* k = instance_class(cm, arg)) out.push_back(k);
          else if (type_of(cm, arg) == TypeKind::Module) out.push_back(nullptr);  // a model, not analysed
        });
      }
      return out;
    };
    // The functions held in self.X: what __init__'s callers pass for the parameter X was bound from.
    auto held_functions = [&](std::string_view attr) {
      std::vector<const Function*> out;
      auto it = c.attr_values.find(attr);
      if (it == c.attr_values.end()) return out;
      for (NodeId v : it->second)
        if (v != kNone)
          init_args(v, [&](const Module& cm, NodeId arg) {
            if (const Function* g = resolve_function(cm, arg)) out.push_back(g);
          });
      return out;
    };
    std::function<bool(const Function*, int)> steps_env_or_model = [&](const Function* g, int depth) {
      if (!g || depth > 2) return false;
      for (uint32_t ci : g->calls) {
        const Call& call = g->mod->calls[ci];
        if (call.target && call.target->cls && call.target->name == "forward" && is_nn_module_class(*call.target->cls))
          return true;
        if (call.callee != kNone && type_of(*g->mod, call.callee) == TypeKind::Module) return true;
        if (steps_environment(*g->mod, call, true)) return true;
        if (call.target && steps_env_or_model(call.target, depth + 1)) return true;
      }
      return false;
    };
    auto stateful = [&](const Class* k) {
      if (!k) return true;  // a model held by the dataset
      if (is_nn_module_class(*k)) return true;  // a policy network
      // a buffer the trainer appends to
      for (auto& [name, f] : k->methods)
        for (uint32_t ci : f->calls) {
          const Call& call = f->mod->calls[ci];
          if (!self_attr(f->mod->tree, call.receiver).empty() && mutating(call.method)) return true;
        }
      return false;
    };
    for (const Function* f : path) {
      const Tree& ft = f->mod->tree;
      if (f->body == kNone) continue;
      for (NodeId n = f->body; n < ft[f->body].subtree_end; ++n) {
        std::string_view a = self_attr(ft, n);
        if (!a.empty() && changed.count(a)) return DS::LiveState;
      }
      for (uint32_t ci : f->calls) {
        const Call& call = f->mod->calls[ci];
        // the model: an analysed nn.Module's forward, or a call of a value typed as a module
        if (call.target && call.target->cls && call.target->name == "forward" && is_nn_module_class(*call.target->cls))
          return DS::LiveState;
        NodeId callee = call.callee;
        if (callee != kNone && type_of(*f->mod, callee) == TypeKind::Module) return DS::LiveState;
        // an environment step: env.step(action), env.reset()
        if (steps_environment(*f->mod, call, true)) return DS::LiveState;
        // a method or call of an object held by the dataset that training changes or that is a model
        NodeId holder = call.receiver != kNone ? call.receiver : callee;
        // a callback handed to the dataset (`ExperienceSource(self.generate_batch)`) and called as
        // `self.generate_batch()`, that steps an environment or runs the model
        if (std::string_view cb_attr = self_attr(ft, callee); !cb_attr.empty() && !c.methods.count(cb_attr))
          for (const Function* cb : held_functions(cb_attr))
            if (steps_env_or_model(cb, 0)) return DS::LiveState;
        std::string_view a = self_attr(ft, holder);
        if (a.empty()) continue;
        for (const Class* k : held_classes(a))
          if (stateful(k)) return DS::LiveState;
      }
    }
  }
  // An IterableDataset is copied into every worker process: one that never asks which worker it
  // runs in (`get_worker_info()`, a `worker_*` attribute or name an init function sets) yields
  // its whole stream from each of them, so workers would duplicate the data.
  if (c.derives_from({"torch.utils.data.IterableDataset", "torch.utils.data.dataset.IterableDataset"}) &&
      !c.find_method("__getitem__") && !worker_aware(c))
    return DS::Unsharded;
  // __getitem__ that only indexes (or returns) attributes built in __init__
  Function* g = c.find_method("__getitem__");
  if (!g || g->body == kNone) return DS::Unknown;
  const Tree& gt = g->mod->tree;
  // a placement on the accelerator in a value: `.cuda()`, `.to(device)`, `torch.zeros(..., device="cuda")`
  auto places = [&](const Module& vm, NodeId v) {
    const Tree& vt = vm.tree;
    for (NodeId x = v; x != kNone && x < vt[v].subtree_end; ++x)
      if (vt.is(x, K::Call))
        if (const Call* vc = vm.call_at(x); vc && initialises_cuda(vm, *vc) && !vc->qname.starts_with("torch.cuda."))
          return true;
    return false;
  };
  for (uint32_t ci : g->calls)
    if (places(*g->mod, g->mod->calls[ci].node)) return DS::OnDevice;  // `return self.data[i].cuda()`
  bool on_device = false;
  std::vector<std::string_view> read_attrs;  // the self.X __getitem__ reads
  for (NodeId n = g->body; n < gt[g->body].subtree_end; ++n) {
    K k = gt.kind(n);
    if (k == K::Call) {
      const Call* call = g->mod->call_at(n);
      if (!call || !conversion_call(*call)) return DS::Unknown;
    } else if (k == K::FunctionDefinition || k == K::Lambda || k == K::ClassDefinition || k == K::WithStatement ||
               k == K::ForStatement || k == K::WhileStatement || k == K::Await) {
      return DS::Unknown;
    } else if (k == K::Attribute) {
      std::string_view a = self_attr(gt, n);
      if (a.empty()) continue;
      if (c.methods.count(a)) return DS::Unknown;  // a method of its own (a transform, a loader)
      const Class* owner = &c;
      read_attrs.push_back(a);
      auto it = owner->attr_values.find(a);
      if (it == owner->attr_values.end()) return DS::Unknown;
      // set again outside __init__: still in memory when every value is a container written out
      // or a slice of itself (a buffer the program fills and trims: `self.items = []`,
      // `self.items = self.items[n:]`, its `append`s and `extend`s), not storage opened later
      if (owner->attrs_mutated_outside_init.count(a))
        for (NodeId v : it->second) {
          const Tree& at = m.tree;
          bool container = v != kNone && (at.is(v, K::List) || at.is(v, K::Dictionary) || at.is(v, K::Tuple) ||
                                          at.is(v, K::ListComprehension));
          bool own_slice = v != kNone && at.is(v, K::Subscript) && self_attr(at, at.field(v, F::Value)) == a;
          if (!container && !own_slice) return DS::Unknown;
        }
      for (NodeId v : it->second) {
        if (lazy_storage(m, v)) return DS::Unknown;
        on_device = on_device || places(m, v);
      }
    }
  }
  if (on_device) return DS::OnDevice;
  // no call at all, and every attribute read holds a string or a number: a prompt and its index
  if (g->calls.empty() && !read_attrs.empty()) {
    auto host = [&](const Module& vm, NodeId v) {
      const Tree& vt = vm.tree;
      if (v == kNone) return false;
      if (vt.is(v, K::String) || vt.is(v, K::ConcatenatedString)) return true;
      return eval(vm, v).all([](const Literal&) { return true; }, /*absent_ok=*/false);
    };
    bool all_host = true;
    for (std::string_view a : read_attrs) {
      auto it = c.attr_values.find(a);
      if (it == c.attr_values.end()) return DS::InMemory;
      for (NodeId v : it->second) {
        if (host(m, v)) continue;
        // `self.prompt = prompt`: what every caller of __init__ passes for the parameter (one that
        // passes nothing for it, and a class no analysed code builds, are not known)
        size_t passed = 0;
        init_args(v, [&](const Module& cm, NodeId arg) {
          ++passed;
          all_host = all_host && host(cm, arg);
        });
        if (!all_host || passed == 0 || passed != callers_of(init).size()) {
          all_host = false;
          break;
        }
      }
      if (!all_host) break;
    }
    if (all_host) return DS::HostValues;
  }
  // A sample made of attributes and the index alone (`{"prompt": self.prompt, "index": index}`,
  // the prompts of a generation pass) is in memory too: there is nothing to load.
  return DS::InMemory;
}

bool ProgramModel::steps_environment(const Module& m, const Call& c, bool reset_too) const {
  if (c.receiver == kNone || !(c.method == "step" || (reset_too && c.method == "reset"))) return false;
  if (icontains(last_component(dotted_text(m.tree, c.receiver)), "env")) return true;
  for (auto& o : origins(m, c.receiver))
    if (o.starts_with("gym.") || o.starts_with("gymnasium.")) return true;
  return false;
}

NodeId ProgramModel::loader_dataset(const Module& m, const Call& loader) const {
  NodeId ds = keyword_arg(m, loader, "dataset");
  return ds != kNone ? ds : positional_arg(m, loader, 0);
}

namespace {
// A call that makes indices: `range(n)`, `torch.arange(n)`, `torch.randperm(n)`, `mask.nonzero()`,
// also reshaped, converted or moved (`mask.nonzero(as_tuple=False).view(-1)`, `.to(device)`).
bool index_values(const Module& m, const Call& c, int depth) {
  if (depth > 6) return false;
  std::string_view q = c.qname;
  if (q == "builtins.range" || q == "torch.arange" || q == "torch.randperm" || q == "torch.nonzero" ||
      q == "torch.argwhere" || q == "numpy.arange" || q == "numpy.random.permutation" || q == "numpy.flatnonzero")
    return true;
  if (c.receiver == kNone || c.target) return false;
  std::string_view a = c.method;
  if (a == "nonzero" || a == "argwhere") return true;
  if (a == "view" || a == "reshape" || a == "flatten" || a == "squeeze" || a == "to" || a == "cuda" || a == "cpu" ||
      a == "long" || a == "int" || a == "contiguous" || a == "unique")
    if (m.tree.is(c.receiver, K::Call))
      if (const Call* r = m.call_at(c.receiver)) return index_values(m, *r, depth + 1);
  return false;
}
}  // namespace

ProgramModel::DatasetStorage ProgramModel::dataset_storage(const Module& m, NodeId ds) const {
  struct Follow {
    const ProgramModel& pm;
    int budget = 64;
    // All values of `e` agree on a storage, else Unknown.
    DS of(const Module& mm, NodeId e, int depth) {
      const Tree& t = mm.tree;
      if (e == kNone || depth > 8 || --budget < 0) return DS::Unknown;
      switch (t.kind(e)) {
        case K::ParenthesizedExpression: return of(mm, t.first_named_child(e), depth + 1);
        case K::Call: {
          const Call* c = mm.call_at(e);
          if (!c) return DS::Unknown;
          if (in_memory_dataset(c->qname)) return DS::InMemory;
          if (index_values(mm, *c, 0)) return DS::Indices;
          if (is_subset_wrapper(c->qname)) return of(mm, pm.positional_arg(mm, *c, 0), depth + 1);
          if (c->qname == "torch.utils.data.ConcatDataset" || c->qname == "torch.utils.data.dataset.ConcatDataset") {
            NodeId a = pm.positional_arg(mm, *c, 0);
            if (a == kNone || !(t.is(a, K::List) || t.is(a, K::Tuple))) return DS::Unknown;
            return all(mm, t.named_children(a), depth);
          }
          if (c->target_class) return pm.class_dataset_storage(*c->target_class);
          if (c->target && c->target->body != kNone) return all(*c->target->mod, return_values(*c->target), depth);  // a factory
          // a `datasets` table: tokenized ahead by `.map(tokenize)`, then split, filtered,
          // grouped (`.map(group_texts)`) or formatted
          if (c->receiver != kNone && keeps_rows(c->method) && !transforms_on_read(mm)) {
            if (c->method == "map") {
              NodeId fn = pm.keyword_arg(mm, *c, "function");
              if (fn == kNone) fn = pm.positional_arg(mm, *c, 0);
              if (tokenizes(pm, mm, fn)) return DS::Tokens;
            }
            return of(mm, c->receiver, depth + 1) == DS::Tokens ? DS::Tokens : DS::Unknown;
          }
          return DS::Unknown;
        }
        case K::Subscript: {
          // one split of a tokenized table (`processed["train"]`)
          NodeId v = t.field(e, F::Value);
          return of(mm, v, depth + 1) == DS::Tokens ? DS::Tokens : DS::Unknown;
        }
        case K::Identifier: {
          // `ds = ds.map(tokenize)`: the name is rebound, and the assignment that reaches this
          // read says what it holds
          if (ProgramModel::Reaching r = pm.reaching(mm, e); r.value != kNone && r.in_place == kNone)
            if (of(mm, r.value, depth + 1) == DS::Tokens) return DS::Tokens;
          auto* bs = pm.bindings_of(mm, e);
          if (!bs || bs->empty()) return DS::Unknown;
          std::vector<std::pair<const Module*, NodeId>> vals;
          for (auto& b : *bs) {
            if (b.kind == Binding::Kind::Assign && b.value != kNone) {
              if (b.whole) {
                vals.emplace_back(&mm, b.value);
                continue;
              }
              // train_ds, val_ds = random_split(ds, [n1, n2])
              if (t.is(b.value, K::Call))
                if (const Call* c = mm.call_at(b.value); c && is_subset_wrapper(c->qname)) {
                  vals.emplace_back(&mm, pm.positional_arg(mm, *c, 0));
                  continue;
                }
              // dataset, model, optimizer = load_train_objs(): that element of what it returns
              if (unpacked(mm, b, t.text(e), vals)) continue;
              return DS::Unknown;
            }
            if (b.kind == Binding::Kind::Param) {
              // a dataset passed to a helper: what every caller passes
              Function* f = mm.enclosing_function(e);
              if (!f) return DS::Unknown;
              size_t idx = 0;
              while (idx < f->params.size() && f->params[idx] != t.text(e)) ++idx;
              const auto& callers = pm.callers_of(f);
              if (idx == f->params.size() || callers.empty() || callers.size() > 8) return DS::Unknown;
              for (const Call* c : callers) {
                NodeId arg = pm.keyword_arg(*c->mod, *c, t.text(e));
                size_t offset = (!f->params.empty() && (f->params[0] == "self" || f->params[0] == "cls") &&
                                 (c->receiver != kNone || c->target_class))
                                    ? 1
                                    : 0;
                if (arg == kNone && idx >= offset && !pm.has_splat(*c->mod, *c))
                  arg = pm.positional_arg(*c->mod, *c, idx - offset);
                if (arg == kNone) return DS::Unknown;
                vals.emplace_back(c->mod, arg);
              }
              continue;
            }
            return DS::Unknown;
          }
          return all_of(vals, depth);
        }
        case K::Attribute: {
          std::string_view a;
          NodeId o = t.field(e, F::Object), an = t.field(e, F::Attribute);
          if (o == kNone || an == kNone || !t.is(o, K::Identifier) || t.text(o) != "self") return DS::Unknown;
          a = t.text(an);
          Function* f = mm.enclosing_function(e);
          while (f && !f->cls) f = f->outer;
          if (!f || !f->cls) return DS::Unknown;
          auto it = f->cls->attr_values.find(a);
          if (it == f->cls->attr_values.end() || it->second.empty()) return DS::Unknown;
          std::vector<std::pair<const Module*, NodeId>> vals;
          for (NodeId v : it->second) vals.emplace_back(f->cls->mod, v);
          return all_of(vals, depth);
        }
        default: return DS::Unknown;
      }
    }
    // `name` bound by unpacking (`a, b = f()` or `a, b = x, y`): the values it takes, appended
    // to `vals`; false when they cannot be seen (a starred target, a return that is no tuple).
    bool unpacked(const Module& mm, const Binding& b, std::string_view name,
                  std::vector<std::pair<const Module*, NodeId>>& vals) {
      const Tree& t = mm.tree;
      if (b.stmt == kNone || !t.is(b.stmt, K::Assignment)) return false;
      NodeId left = t.field(b.stmt, F::Left);
      if (left == kNone || !(t.is(left, K::PatternList) || t.is(left, K::TuplePattern))) return false;
      auto els = t.named_children(left);
      size_t index = els.size();
      for (size_t i = 0; i < els.size(); ++i) {
        if (t.is(els[i], K::ListSplatPattern)) return false;
        if (t.is(els[i], K::Identifier) && t.text(els[i]) == name) index = i;
      }
      if (index == els.size()) return false;
      auto element = [&](const Tree& vt, NodeId v) -> NodeId {
        if (v == kNone || !(vt.is(v, K::ExpressionList) || vt.is(v, K::Tuple))) return kNone;
        auto xs = vt.named_children(v);
        if (xs.size() != els.size()) return kNone;
        for (NodeId x : xs)
          if (vt.is(x, K::ListSplat)) return kNone;
        return xs[index];
      };
      if (NodeId x = element(t, b.value); x != kNone) {
        vals.emplace_back(&mm, x);
        return true;
      }
      if (!t.is(b.value, K::Call)) return false;
      const Call* c = mm.call_at(b.value);
      if (!c || !c->target || c->target->body == kNone) return false;
      const Function& f = *c->target;
      size_t before = vals.size();
      for (NodeId r : return_values(f)) {
        NodeId x = element(f.mod->tree, r);
        if (x == kNone) {
          vals.resize(before);
          return false;
        }
        vals.emplace_back(f.mod, x);
      }
      return vals.size() > before;
    }
    DS all(const Module& mm, const std::vector<NodeId>& es, int depth) {
      std::vector<std::pair<const Module*, NodeId>> vals;
      for (NodeId e : es) vals.emplace_back(&mm, e);
      return all_of(vals, depth);
    }
    DS all_of(const std::vector<std::pair<const Module*, NodeId>>& vals, int depth) {
      if (vals.empty()) return DS::Unknown;
      DS k = DS::Unknown;
      for (size_t i = 0; i < vals.size(); ++i) {
        DS v = of(*vals[i].first, vals[i].second, depth + 1);
        if (v == DS::Unknown || (i > 0 && v != k)) return DS::Unknown;
        k = v;
      }
      return k;
    }
  };
  Follow f{*this};
  return f.of(m, ds, 0);
}

}  // namespace tl::py
