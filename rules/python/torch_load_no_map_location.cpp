// TL402 torch-load-no-map-location: torch.load(...) without map_location, where the failure can
// happen: not a load that only runs when CUDA is available, of NumPy content, of what the same
// code wrote a moment before in this process (a BytesIO round trip, save-best-then-reload, a test
// reading back the checkpoint it wrote), of a dataset's own data files, or of a file whose writer
// in the same code stores only host values, or of a checkpoint loaded by code that places its model
// on CUDA unconditionally in a program with one process, or of a file of preprocessed data by its
// names (a cache of converted examples, a tokenizer's vocabulary).
#include <algorithm>
#include <cctype>
#include <map>

#include "rules/python/common.h"
#include "rules/python/fix_edits.h"
#include "rules/python/program_facts.h"
#include "rules/python/rules.h"

namespace tl::rules {

namespace {

using py::K;
using py::F;
using py::NodeId;
using py::kNone;

bool is_load(const py::Call& c) { return c.qname == "torch.load" || c.qname == "torch.serialization.load"; }
bool is_save(const py::Call& c) { return c.qname == "torch.save" || c.qname == "torch.serialization.save"; }
bool is_bytes_io(const py::Module& m, NodeId e) {
  if (e == kNone || !m.tree.is(e, K::Call)) return false;
  const py::Call* c = m.call_at(e);
  return c && qname_in(c->qname, {"io.BytesIO", "_io.BytesIO"});
}

// Is some call inside `n`'s subtree one to `qname`?
bool calls_in(const py::Module& m, NodeId n, std::string_view qname) {
  const auto& t = m.tree;
  if (n == kNone) return false;
  for (NodeId x = n; x < t[n].subtree_end; ++x)
    if (t.is(x, K::Call))
      if (const py::Call* c = m.call_at(x); c && c->qname == qname) return true;
  return false;
}

// Under `if torch.cuda.is_available():` (its body, not its else): the load never runs on the
// CPU-only machine the rule protects.
bool only_with_cuda(const py::Module& m, NodeId n, NodeId stop) {
  const auto& t = m.tree;
  for (NodeId child = n, p = t.parent(n); p != kNone && p != stop; child = p, p = t.parent(p))
    if (t.is(p, K::IfStatement) && t.field(p, F::Consequence) == child &&
        calls_in(m, t.field(p, F::Condition), "torch.cuda.is_available"))
      return true;
  return false;
}

// The file a load or save argument stands for: `f` bound by `with open(P) as f` is P's text; a
// `io.BytesIO(...)` (or a name bound to one) is "<bytes>"; anything else its own text.
std::string path_key(const py::ProgramModel& pm, const py::Module& m, NodeId arg) {
  const auto& t = m.tree;
  if (arg == kNone) return {};
  if (is_bytes_io(m, arg)) return "<bytes>";
  if (t.is(arg, K::Identifier)) {
    // the binding of the name that reaches this use last in the text
    std::string key;
    if (auto* bs = pm.bindings_of(m, arg))
      for (auto& b : *bs) {
        if (b.stmt == kNone || b.stmt > arg) continue;
        key.clear();
        if (b.kind == py::Binding::Kind::Assign && b.whole && is_bytes_io(m, b.value)) key = "<bytes>";
        // `with open(P, "rb") as f`
        if (b.kind == py::Binding::Kind::WithTarget && b.value != kNone && t.is(b.value, K::Call))
          if (const py::Call* oc = m.call_at(b.value); oc && oc->qname == "builtins.open")
            if (NodeId pth = pm.positional_arg(m, *oc, 0); pth != kNone) key = "open:" + std::string(t.text(pth));
      }
    if (!key.empty()) return key;
  }
  return std::string(t.text(arg));
}

NodeId file_arg(const py::ProgramModel& pm, const py::Module& m, const py::Call& c, size_t pos) {
  NodeId a = pm.keyword_arg(m, c, "f");
  return a != kNone ? a : pm.positional_arg(m, c, pos);
}

// The loaded value is NumPy content: passed straight to `torch.from_numpy`, or bound to a name
// that `torch.from_numpy(name)` / `torch.from_numpy(name[k])` reads in the same scope.
bool numpy_content(const py::Module& m, const py::Call& load) {
  const auto& t = m.tree;
  NodeId p = t.parent(load.node);
  if (p != kNone && t.is(p, K::ArgumentList))
    if (const py::Call* outer = m.call_at(t.parent(p)); outer && outer->qname == "torch.from_numpy") return true;
  if (p == kNone || !t.is(p, K::Assignment) || t.field(p, F::Right) != load.node) return false;
  NodeId left = t.field(p, F::Left);
  if (left == kNone || !t.is(left, K::Identifier)) return false;
  for (auto& c : m.calls) {
    if (c.fn != load.fn || c.qname != "torch.from_numpy" || c.node < load.node) continue;
    NodeId args = t.field(c.node, F::Arguments);
    NodeId a = args == kNone ? kNone : t.first_named_child(args);
    while (a != kNone && t.is(a, K::Subscript)) a = t.field(a, F::Value);
    if (a != kNone && t.is(a, K::Identifier) && t.text(a) == t.text(left)) return true;
  }
  return false;
}

// What this process wrote itself: a BytesIO filled by torch.save in the same function (an object
// sent to another rank; bytes a class embeds in an exported file are not this), a file saved
// earlier in the same scope under the same path (save the best model, reload it for the test
// set), or, in a test, any checkpoint the test wrote before reading one back.
// A path written out in the code: a string, or a join of strings (`os.path.join("ref", "a.pt")`,
// `Path("ref") / "a.pt"`): a file committed with the code, not one a run produced.
bool literal_path(const py::ProgramModel& pm, const py::Module& m, NodeId n, int depth = 0) {
  const auto& t = m.tree;
  if (n == kNone || depth > 8) return false;
  if (t.is(n, K::Identifier)) {
    // a name bound to such a path, or `with open(<path>, "rb") as f`
    if (NodeId v = pm.reaching(m, n).value; v != kNone) return literal_path(pm, m, v, depth + 1);
    if (auto* bs = pm.bindings_of(m, n))
      for (auto& b : *bs)
        if (b.kind == py::Binding::Kind::WithTarget && b.value != kNone && t.is(b.value, K::Call))
          if (const py::Call* oc = m.call_at(b.value); oc && oc->qname == "builtins.open")
            return literal_path(pm, m, pm.positional_arg(m, *oc, 0), depth + 1);
    return false;
  }
  if (t.is(n, K::String)) return true;
  if (t.is(n, K::ParenthesizedExpression)) return literal_path(pm, m, t.first_named_child(n), depth + 1);
  if (t.is(n, K::BinaryOperator))
    return t.operator_text(n) == "/" && literal_path(pm, m, t.field(n, F::Left), depth + 1) &&
           literal_path(pm, m, t.field(n, F::Right), depth + 1);
  if (t.is(n, K::Call)) {
    const py::Call* c = m.call_at(n);
    if (!c || !qname_in(c->qname, {"os.path.join", "posixpath.join", "pathlib.Path", "pathlib.PurePath"})) return false;
    NodeId args = t.field(n, F::Arguments);
    if (args == kNone) return false;
    auto kids = t.named_children(args);
    if (kids.empty()) return false;
    for (NodeId a : kids)
      if (!literal_path(pm, m, a, depth + 1)) return false;
    return true;
  }
  return false;
}

bool written_by_this_process(const py::ProgramModel& pm, const py::Module& m, const py::Call& load) {
  // in a test, a path computed at run time (a temporary folder, a handler's `last_checkpoint`, a
  // runner's work_dir) names what the test run produced on this machine; a path written out names
  // a reference file committed with the tests, which may come from a GPU machine
  if (m.is_test && load.fn) {
    NodeId f = file_arg(pm, m, load, 0);
    if (f != kNone && !literal_path(pm, m, f)) return true;
  }
  std::string key = path_key(pm, m, file_arg(pm, m, load, 0));
  if (key.empty()) return false;
  for (auto& c : m.calls) {
    if (c.fn != load.fn) continue;
    if (key == "<bytes>") {  // filled anywhere in the function
      if (is_save(c) && path_key(pm, m, file_arg(pm, m, c, 1)) == key) return true;
      continue;
    }
    if (c.node > load.node) continue;
    if (is_save(c) && path_key(pm, m, file_arg(pm, m, c, 1)) == key) return true;
    if (m.is_test && load.fn) {
      if (is_save(c)) return true;
      if (c.receiver != kNone && (c.method == "save_checkpoint" || c.method == "save" || c.method == "save_state" ||
                                  c.method == "save_model" || c.method == "save_pretrained" || c.method == "fit"))
        return true;
    }
  }
  if (m.is_test && (key.find("tmp_path") != std::string::npos || key.find("tmpdir") != std::string::npos)) return true;
  return false;
}

// Data, not a checkpoint: a load in a method of a Dataset class (also one derived from a
// library's dataset base, `InMemoryDataset`, `VisionDataset`), which reads the samples or the
// processed files that its own preprocessing wrote from host tensors (`self.data, self.slices =
// torch.load(self.processed_paths[0])`, a mel spectrogram per utterance).
bool in_dataset_class(const py::Call& load) {
  for (const py::Function* f = load.fn; f; f = f->outer) {
    const py::Class* c = f->cls;
    if (!c) continue;
    if (py::is_dataset_class(*c)) return true;
    std::vector<const py::Class*> todo{c};
    for (size_t i = 0; i < todo.size() && i < 16; ++i) {
      for (auto& b : todo[i]->bases)
        if (py::icontains(py::last_component(b), "dataset")) return true;
      for (auto* lb : todo[i]->local_bases) todo.push_back(lb);
    }
  }
  return false;
}

// `lr_scheduler.state_dict()`, `scheduler.load_state_dict(...)`: a call on a learning-rate
// scheduler, by its name. A scheduler's state is counters, rates and its settings.
bool on_scheduler(const py::Tree& t, const py::Call& c) {
  return c.receiver != kNone && py::icontains(py::last_component(py::dotted_text(t, c.receiver)), "sched");
}

// Can the value saved by `torch.save(value, ...)` hold no tensor on a device: numbers, strings,
// containers of them, host copies (`.cpu()`, `.tolist()`, `.item()`), random-number states (CPU
// byte tensors, CUDA generators' included), a name or `self.<attr>` bound only to such values,
// or a constructor's parameter kept in an attribute of a class that is no module (a scheduler's
// `self.base_lr = lr`)?
bool host_value(const py::ProgramModel& pm, const py::Module& m, NodeId e, const py::Class* cls,
                const py::Function* loader, int depth = 0) {
  const auto& t = m.tree;
  if (e == kNone || depth > 6) return false;
  switch (t.kind(e)) {
    case K::Integer: case K::Float: case K::String: case K::True: case K::False: case K::None: return true;
    case K::ParenthesizedExpression: return host_value(pm, m, t.first_named_child(e), cls, loader, depth + 1);
    case K::List: case K::Tuple:
      for (NodeId k : t.named_child_range(e))
        if (!host_value(pm, m, k, cls, loader, depth + 1)) return false;
      return true;
    case K::Dictionary:
      for (NodeId k : t.named_child_range(e)) {
        if (!t.is(k, K::Pair)) return false;
        if (!host_value(pm, m, t.field(k, F::Value), cls, loader, depth + 1)) return false;
      }
      return true;
    case K::BinaryOperator:
      return host_value(pm, m, t.field(e, F::Left), cls, loader, depth + 1) && host_value(pm, m, t.field(e, F::Right), cls, loader, depth + 1);
    case K::UnaryOperator: return host_value(pm, m, t.field(e, F::Argument), cls, loader, depth + 1);
    case K::Subscript: return host_value(pm, m, t.field(e, F::Value), cls, loader, depth + 1);
    case K::Call: {
      const py::Call* c = m.call_at(e);
      if (!c) return false;
      if (c->receiver != kNone && (c->method == "cpu" || c->method == "tolist" || c->method == "item" ||
                                   c->method == "numpy" || c->method == "get_state" || c->method == "getstate"))
        return true;
      if (c->method == "state_dict" && on_scheduler(t, *c)) return true;  // a learning-rate scheduler's state
      return qname_in(c->qname, {"builtins.int", "builtins.float", "builtins.str", "builtins.bool", "builtins.len",
                                 "builtins.round", "torch.get_rng_state", "torch.random.get_rng_state",
                                 "torch.cuda.get_rng_state", "torch.cuda.get_rng_state_all",
                                 "numpy.random.get_state", "random.getstate"});
    }
    case K::Identifier: {
      if (NodeId v = pm.reaching(m, e).value; v != kNone) return host_value(pm, m, v, cls, loader, depth + 1);
      auto* bs = pm.bindings_of(m, e);
      if (!bs || bs->empty()) return false;
      for (auto& b : *bs) {
        if (b.kind == py::Binding::Kind::Param) {
          // a constructor's argument kept by a class that holds no layers
          if (!cls || py::ProgramModel::is_nn_module_class(*cls)) return false;
          continue;
        }
        if (b.kind != py::Binding::Kind::Assign || !b.whole || !host_value(pm, m, b.value, cls, loader, depth + 1)) return false;
      }
      return true;
    }
    case K::Attribute: {
      NodeId obj = t.field(e, F::Object), attr = t.field(e, F::Attribute);
      if (!cls || obj == kNone || attr == kNone || !t.is(obj, K::Identifier) || t.text(obj) != "self") return false;
      auto it = cls->attr_values.find(t.text(attr));
      if (it == cls->attr_values.end() || it->second.empty()) return false;
      for (NodeId v : it->second) {
        // what the loading function restores from the file is what the file holds
        if (loader && loader->mod == &m && m.tree.contains(loader->def, v)) continue;
        if (!host_value(pm, m, v, cls, loader, depth + 1)) return false;
      }
      return true;
    }
    default: return false;
  }
}

// The file names written out in a path expression ("trainfeat.pth" in
// `os.path.join(args.dump, "trainfeat.pth")`): string literals with an extension.
std::vector<std::string> file_names_in(const py::Module& m, NodeId n) {
  std::vector<std::string> out;
  const auto& t = m.tree;
  if (n == kNone) return out;
  for (NodeId x = n; x < t[n].subtree_end; ++x)
    if (t.is(x, K::String)) {
      std::string v = py::string_literal_value(t, x);
      size_t dot = v.rfind('.');
      if (dot != std::string::npos && dot > 0 && dot + 1 < v.size()) out.push_back(v.substr(v.rfind('/') == std::string::npos ? 0 : v.rfind('/') + 1));
    }
  return out;
}

// The code that writes what this load reads stores no device tensor: every `torch.save` of the
// loading class (its own save and load pair: a scheduler's counters, a tracker's statistics; of a
// class with a pair per part, `save_lr_scheduler` for `load_lr_scheduler`), or
// of the module under the same file name (`torch.save(feats.cpu(), join(d, "trainfeat.pth"))`),
// saves host values, and there is at least one.
bool saved_from_host(const py::ProgramModel& pm, const py::Module& m, const py::Call& load) {
  const py::Class* cls = nullptr;
  for (const py::Function* f = load.fn; f && !cls; f = f->outer) cls = f->cls;
  std::vector<std::string> names = file_names_in(m, file_arg(pm, m, load, 0));
  // a class with a pair per part (`save_lr_scheduler` and `load_lr_scheduler`): the load's partner
  auto part = [](const py::Function* f, std::string_view verb) -> std::string_view {
    if (!f || !f->name.starts_with(verb) || f->name.size() == verb.size()) return {};
    return f->name.substr(verb.size());
  };
  std::string_view load_part = part(load.fn, "load");
  bool partner_found = false;
  if (cls && !load_part.empty())
    for (auto& c : m.calls)
      if (is_save(c) && c.fn && c.fn->cls == cls && part(c.fn, "save") == load_part) partner_found = true;
  size_t matched = 0;
  for (auto& c : m.calls) {
    if (!is_save(c)) continue;
    const py::Class* save_cls = nullptr;
    for (const py::Function* f = c.fn; f && !save_cls; f = f->outer) save_cls = f->cls;
    bool same = cls && save_cls == cls && (!partner_found || (c.fn->cls == cls && part(c.fn, "save") == load_part));
    if (!same && !names.empty())
      for (auto& n : file_names_in(m, file_arg(pm, m, c, 1)))
        if (std::find(names.begin(), names.end(), n) != names.end()) same = true;
    if (!same) continue;
    NodeId v = pm.keyword_arg(m, c, "obj");
    if (v == kNone) v = pm.positional_arg(m, c, 0);
    if (!host_value(pm, m, v, save_cls, load.fn)) return false;
    ++matched;
  }
  return matched > 0;
}

// `.cuda()`, `.cuda(0)`, `.to("cuda")`, `.to("cuda:0")`: a placement that needs a GPU.
bool places_on_cuda(const py::Module& m, const py::Call& c, const py::ProgramModel& pm) {
  const auto& t = m.tree;
  if (c.receiver == kNone) return false;
  if (c.method == "cuda") {
    NodeId a = pm.positional_arg(m, c, 0);
    return a == kNone || t.is(a, K::Integer);
  }
  if (c.method != "to") return false;
  NodeId a = pm.positional_arg(m, c, 0);
  if (a == kNone || !t.is(a, K::String)) return false;
  std::string_view s = t.text(a);
  return s == "\"cuda\"" || s == "'cuda'" || s.starts_with("\"cuda:") || s.starts_with("'cuda:");
}

// The loaded object is a learning-rate scheduler's state: it goes straight into
// `scheduler.load_state_dict(...)`, or through a name that does; never a device tensor.
bool restores_scheduler(const py::ProgramModel& pm, const py::Module& m, const py::Call& load) {
  const auto& t = m.tree;
  for (const py::Call& c : m.calls) {
    if (c.fn != load.fn || c.method != "load_state_dict" || !on_scheduler(t, c)) continue;
    NodeId a = pm.positional_arg(m, c, 0);
    if (a == load.node) return true;
    if (a != kNone && t.is(a, K::Identifier) && pm.reaching(m, a).value == load.node) return true;
  }
  return false;
}

// One branch of an `if` loads without `map_location` and another branch of the same `if` loads
// the same file with it (`if args.gpu is None: torch.load(p)` / `else: torch.load(p,
// map_location=f"cuda:{args.gpu}")`), in a module with no CPU fallback: the author chose where
// each path puts the tensors.
bool sibling_maps(const py::ProgramModel& pm, const py::Module& m, const py::Call& load) {
  const auto& t = m.tree;
  NodeId arg = pm.positional_arg(m, load, 0);
  if (arg == kNone) return false;
  std::string_view file = t.text(arg);
  // the innermost `if` whose branch holds the load, and that branch
  NodeId ifs = kNone, branch = kNone;
  for (NodeId child = load.node, p = t.parent(load.node); p != kNone; child = p, p = t.parent(p)) {
    if (t.is(p, K::FunctionDefinition) || t.is(p, K::Lambda)) break;
    if (t.is(p, K::IfStatement)) {
      ifs = p;
      branch = child;
      break;
    }
  }
  if (ifs == kNone) return false;
  // a module with a CPU fallback (`if not torch.cuda.is_available(): ...`, `torch.device("cpu")`)
  // may take the unmapped branch on a CPU-only machine: still reported
  for (const py::Call& c : m.calls) {
    if (c.qname.starts_with("torch.") && c.qname.ends_with(".is_available")) return false;  // cuda, accelerator, mps
    if (c.qname == "torch.device")
      if (NodeId a = pm.positional_arg(m, c, 0); a != kNone && py::string_literal_value(t, a) == "cpu") return false;
  }
  for (const py::Call& c : m.calls) {
    if (&c == &load || !is_load(c) || c.node < ifs || c.node >= t[ifs].subtree_end) continue;
    if (c.node >= branch && c.node < t[branch].subtree_end) continue;  // the same branch
    NodeId a = pm.positional_arg(m, c, 0);
    if (a != kNone && t.text(a) == file && pm.keyword_arg(m, c, "map_location") != kNone) return true;
  }
  return false;
}

// Code that cannot run without a GPU and is not distributed: a statement that runs whenever the
// load runs (in the load's block or a block around it, in the same function), places something on
// CUDA (`model = Net().cuda()`, `self.net = Net().float().cuda().eval()`), and neither the module
// nor any program it runs in starts processes (a process group, DDP, a launcher). The script never
// runs on a CPU-only machine, and a checkpoint saved on its GPU loads onto that GPU, where its
// model is. (With several processes, each would load onto the saving rank's GPU: still reported.)
bool cuda_only_single_process(const py::ProgramModel& pm, const py::Module& m, const py::Call& load) {
  const auto& t = m.tree;
  // the blocks that run whenever the load runs: its own and those around it, up to its scope
  std::vector<NodeId> blocks;
  for (NodeId x = t.parent(py::ProgramModel::statement_of(t, load.node)); x != kNone; x = t.parent(x)) {
    if (t.is(x, K::Block) || t.is(x, K::Module)) blocks.push_back(x);
    if (t.is(x, K::FunctionDefinition) || t.is(x, K::ClassDefinition) || t.is(x, K::Lambda)) break;
  }
  bool places = false;
  for (const py::Call& c : m.calls) {
    if (c.fn != load.fn || !places_on_cuda(m, c, pm)) continue;
    NodeId stmt = py::ProgramModel::statement_of(t, c.node);
    // in one of those blocks, not under an `if`, a loop, a `try` or a `with` of its own
    if (std::find(blocks.begin(), blocks.end(), t.parent(stmt)) == blocks.end()) continue;
    // after the load: only when no return, raise or loop exit lies between (`if args.load: return`)
    if (stmt > load.node) {
      bool exits = false;
      for (NodeId x = load.node; x < stmt && !exits; ++x)
        exits = t.is(x, K::ReturnStatement) || t.is(x, K::RaiseStatement) || t.is(x, K::BreakStatement) ||
                t.is(x, K::ContinueStatement);
      if (exits) continue;
    }
    bool plain = true;  // not inside a lambda, a conditional expression or a boolean operator
    for (NodeId x = t.parent(c.node); x != kNone && x != stmt; x = t.parent(x))
      if (t.is(x, K::Lambda) || t.is(x, K::ConditionalExpression) || t.is(x, K::BooleanOperator)) plain = false;
    if (plain) {
      places = true;
      break;
    }
  }
  if (!places) return false;
  // a process group, a DDP wrapper, a launcher, anywhere in code the program runs; a collective
  // only in the load's module or the entry script (a library's `if world_size > 1: barrier()` is
  // support for distributed callers, not a sign that this program is one)
  auto starts_processes = [](const py::Module&, const py::Call& c) {
    std::string_view q = c.qname;
    for (std::string_view pre : {"torch.distributed.init_process_group", "torch.nn.parallel.DistributedDataParallel",
                                 "torch.nn.parallel.distributed.DistributedDataParallel", "torch.multiprocessing.spawn",
                                 "torch.multiprocessing.start_processes", "deepspeed.initialize",
                                 "deepspeed.init_distributed", "accelerate.Accelerator", "horovod.torch.init",
                                 "colossalai.launch", "torch.distributed.fsdp.FullyShardedDataParallel"})
      if (q.starts_with(pre)) return true;
    return false;
  };
  auto collective = [](const py::Call& c) {
    if (!c.qname.starts_with("torch.distributed.")) return false;
    std::string_view f = py::last_component(c.qname);
    return !(f.starts_with("is_") || f.starts_with("get_"));
  };
  for (const py::Call& c : m.calls)
    if (starts_processes(m, c) || collective(c)) return false;
  for (uint32_t id : m.programs) {
    const py::Program& p = pm.programs()[id];
    if (any_call(pm, p, starts_processes)) return false;
    if (p.entry && p.entry != &m)
      for (const py::Call& c : p.entry->calls)
        if (collective(c)) return false;
  }
  return true;
}

}  // namespace

// A file of preprocessed data, by its names: the path (or the name bound to it) or the name the
// load is assigned to says a cache of examples or a tokenizer's tables (`cached_features_file`,
// `vocab_file`, `corpus = torch.load(os.path.join(d, "cache.pt"))`), and nothing says model
// state. Such files hold Python objects and CPU tensors that a tokenizer or a data converter made
// (a transformers script's `torch.save(features, cached_features_file)`), not a GPU's tensors.
bool preprocessed_data_file(const py::ProgramModel& pm, const py::Module& m, const py::Call& load) {
  const auto& t = m.tree;
  NodeId arg = file_arg(pm, m, load, 0);
  if (arg == kNone) return false;
  // the names: the path expression and what the load is assigned to; the values bound to a path
  // name (`os.path.join(d, "cached_{}_{}".format(split, args.model_name_or_path))`) only for the
  // data words, as they name the cache after the model it was tokenized for
  std::string names(t.text(arg)), values;
  if (t.is(arg, K::Identifier))
    if (auto* bs = pm.bindings_of(m, arg))
      for (auto& b : *bs)
        if (b.kind == py::Binding::Kind::Assign && b.value != kNone &&
            t.text(b.value).find("cached_path(") == std::string_view::npos)  // a download helper's weights
          (values += ' ') += t.text(b.value);
  if (NodeId p = t.parent(load.node); p != kNone && t.is(p, K::Assignment) && t.field(p, F::Right) == load.node)
    (names += ' ') += t.text(t.field(p, F::Left));
  for (std::string* s : {&names, &values})
    for (char& ch : *s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  auto has = [](const std::string& text, std::initializer_list<std::string_view> words) {
    for (auto w : words)
      if (text.find(w) != std::string::npos) return true;
    return false;
  };
  static const std::initializer_list<std::string_view> data = {"cached", "cache_file", "cache_path", "cache.pt",
                                                               "vocab", "corpus", "bpe", "tokeniz"};
  return (has(names, data) || has(values, data)) &&
         !has(names, {"model", "ckpt", "checkpoint", "state", "weight", "optim", "param"});
}

// One finding per file and function: the loads of the same path in one function (`if opt.FT:
// model.load_state_dict(torch.load(opt.saved_model), strict=False)` / `else:
// model.load_state_dict(torch.load(opt.saved_model))`) are one cause, told at the first, with a
// note and a fix edit at each of the others.
void check_torch_load_no_map_location(RuleContext& ctx) {
  std::vector<std::vector<const py::Call*>> groups;
  std::map<std::pair<const py::Function*, std::string>, size_t> group_of;
  for (auto& c : ctx.mod.calls) {
    if (!is_load(c)) continue;
    if (ctx.model.keyword_arg(ctx.mod, c, "map_location") != py::kNone) continue;
    if (ctx.model.positional_arg(ctx.mod, c, 1) != py::kNone || ctx.model.has_splat(ctx.mod, c)) continue;
    NodeId scope = c.fn ? c.fn->body : kNone;
    if (only_with_cuda(ctx.mod, c.node, scope)) continue;
    if (numpy_content(ctx.mod, c)) continue;
    if (written_by_this_process(ctx.model, ctx.mod, c)) continue;
    if (in_dataset_class(c)) continue;
    if (saved_from_host(ctx.model, ctx.mod, c)) continue;
    if (cuda_only_single_process(ctx.model, ctx.mod, c)) continue;
    if (restores_scheduler(ctx.model, ctx.mod, c)) continue;
    if (sibling_maps(ctx.model, ctx.mod, c)) continue;
    if (preprocessed_data_file(ctx.model, ctx.mod, c)) continue;
    // the same path: the same expression, unless it names a `with`/`for` target (`f` of two
    // `with open(...) as f:` blocks is two files)
    NodeId arg = file_arg(ctx.model, ctx.mod, c, 0);
    bool same_text_same_file = arg != kNone;
    if (arg != kNone && ctx.tree.is(arg, K::Identifier))
      if (auto* bs = ctx.model.bindings_of(ctx.mod, arg))
        for (auto& b : *bs)
          if (b.kind == py::Binding::Kind::WithTarget || b.kind == py::Binding::Kind::ForTarget)
            same_text_same_file = false;
    std::string key = same_text_same_file ? std::string(ctx.tree.text(arg)) : "#" + std::to_string(c.node);
    auto [it, fresh] = group_of.emplace(std::make_pair(c.fn, std::move(key)), groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(&c);
  }
  for (auto& g : groups) {
    std::vector<Note> notes;
    for (size_t k = 1; k < g.size(); ++k)
      notes.push_back(RuleContext::note_at(ctx.mod, g[k]->node, "the same file loaded here too, also without "
                                                                "`map_location`"));
    Finding& f = ctx.report(g.front()->node,
                            "`torch.load` without `map_location`: a checkpoint saved from GPU tensors fails to load "
                            "on a CPU-only machine (and lands on the saving GPU elsewhere); pass `map_location=`",
                            std::move(notes));
    // Unsafe: the loaded tensors then live on the CPU, which code using them directly may not expect.
    Fix fix;
    fix.title = "Pass `map_location=\"cpu\"`";
    fix.applicability = Applicability::Unsafe;
    for (const py::Call* c : g) {
      auto edits = add_argument(ctx.mod, c->node, "map_location=\"cpu\"");
      if (edits.empty()) {
        fix.edits.clear();
        break;
      }
      fix.edits.insert(fix.edits.end(), edits.begin(), edits.end());
    }
    if (!fix.edits.empty()) f.fix = std::move(fix);
  }
}

}  // namespace tl::rules
