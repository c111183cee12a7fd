// ProgramModel: what rules read. Built in phases:
//   1. per file, in parallel: parse, collect scopes, bindings, calls, loops, classes (Module)
//   2. once: index analysed modules by dotted name
//   3. per file, in parallel: resolve every call to a qualified name or an analysed function
//   4. once, linear: call-graph facts (optimizer step / backward reached), loop classes
//      (training step / evaluation step / epoch / other), programs, per-step reach of functions
// Rules never re-implement loop or guard logic: they ask `runs_every_step`.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "analyzer/core/string_set.h"
#include "analyzer/core/source_file.h"
#include "analyzer/python/ast.h"

namespace tl::py {

struct Module;
struct Function;
struct Class;
struct Loop;

// A hash of names that a set or map keyed by std::string can be searched with by string_view
// (heterogeneous lookup, with std::equal_to<>): no std::string built per question.
struct NameHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return name_hash(s); }
};

struct Binding {  // 48 bytes: a run holds one per name binding of every scope
  enum class Kind : uint8_t { Assign, AugAssign, Param, Import, Def, ClassDef, ForTarget, WithTarget, Global, Other };
  Kind kind = Kind::Other;
  bool whole = true;     // Assign: the target was the plain name (not one element of a tuple)
  NodeId value = kNone;  // Assign: the right-hand side (whole value, even for tuple targets: see `whole`)
  NodeId stmt = kNone;   // the defining node (assignment, def, import...)
  NodeId default_value = kNone;  // Param: its default, if any
  // Import: the imported qualified name ("torch.nn", "torch.utils.data.DataLoader"): a view of the
  // module's text, or of a name it keeps (Module::import_qnames)
  std::string_view qname;
  Function* fn = nullptr;  // Def
  Class* cls = nullptr;    // ClassDef
};
static_assert(sizeof(void*) != 8 || sizeof(Binding) == 48, "Binding grew: a run holds hundreds of thousands");

// The bindings of one name in one scope, in the order the code makes them: a view into its
// ScopeNames.
class Bindings {
 public:
  Bindings() = default;
  Bindings(const Binding* b, uint32_t n) : b_(b), n_(n) {}
  const Binding* begin() const { return b_; }
  const Binding* end() const { return b_ + n_; }
  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  const Binding& front() const { return b_[0]; }
  const Binding& back() const { return b_[n_ - 1]; }
  const Binding& operator[](size_t i) const { return b_[i]; }

 private:
  const Binding* b_ = nullptr;
  uint32_t n_ = 0;
};

// The names one scope binds. Filled while its module is collected (add), then sealed (seal(), the
// collection's last step; find() and iteration read a sealed table): the bindings of each name
// then lie together in one array, found through an open-addressing index, or by a scan where the
// scope binds few names. An unordered_map of vectors here cost two allocations per name and was,
// after the trees and the texts, the model's largest part (massif, Debian's torch package: 14.5
// MB of a 113 MB heap at its peak).
class ScopeNames {
 public:
  struct Entry {
    std::string_view first;  // the name
    Bindings second;         // its bindings
  };
  ScopeNames() = default;
  ScopeNames(ScopeNames&&) = default;  // the views point into heap arrays, which a move keeps
  ScopeNames& operator=(ScopeNames&&) = default;
  ScopeNames(const ScopeNames&) = delete;
  ScopeNames& operator=(const ScopeNames&) = delete;

  void add(std::string_view name, Binding b) { pending_.emplace_back(name, std::move(b)); }
  void seal();  // groups what was added since the last seal() with what the table held
  void clear() { *this = ScopeNames{}; }
  const Bindings* find(std::string_view name) const;
  size_t size() const { return entries_.size(); }
  // The names in the order they were first bound.
  const Entry* begin() const { return entries_.data(); }
  const Entry* end() const { return entries_.data() + entries_.size(); }

 private:
  std::vector<std::pair<std::string_view, Binding>> pending_;  // until seal()
  std::vector<Binding> bindings_;
  std::vector<Entry> entries_;
  std::vector<uint32_t> index_;  // by hash slot: entry + 1, 0 for a free slot; empty for few names
};

struct Scope {
  Scope* parent = nullptr;   // enclosing function scope, then the module scope (class scopes are skipped)
  Function* fn = nullptr;    // null for the module scope
  ScopeNames names;
  std::unordered_set<std::string_view, NameHash> globals;  // names declared `global` here
  const Bindings* find_local(std::string_view n) const { return names.find(n); }
};

struct Function {
  uint32_t id = 0;  // index in Program::functions()
  Module* mod = nullptr;
  NodeId def = kNone;   // function_definition
  NodeId body = kNone;  // block
  std::string_view name;
  std::string qualname;  // Class.method / outer.<locals>.inner style: "Trainer.fit"
  Class* cls = nullptr;  // the class when this is a method
  Function* outer = nullptr;
  Scope scope;
  std::vector<std::string_view> params;    // in order, including self
  std::vector<NodeId> decorator_exprs;
  std::vector<std::string> decorators;     // resolved qualified names (phase 3)
  std::vector<uint32_t> calls;             // indices into mod->calls made lexically in this body
  // Phase 4 facts.
  bool reaches_opt_step = false;   // this function (or one it calls) performs an optimizer step
  bool reaches_backward = false;
  bool reaches_step_loop = false;  // contains or calls a step loop
  bool is_step_hook = false;       // a framework per-step hook (Lightning training_step, ...)
  std::string hook_desc;
};

struct Class {
  uint32_t id = 0;  // index in ProgramModel's classes_ (every analysed class)
  Module* mod = nullptr;
  NodeId def = kNone;
  std::string_view name;
  std::string qualname;
  std::vector<NodeId> base_exprs;
  std::vector<std::string> bases;      // resolved qualified names of bases (phase 3)
  std::vector<Class*> local_bases;     // bases defined in analysed files (phase 3)
  std::unordered_map<std::string_view, Function*, NameHash> methods;
  // self.<attr> = <value> anywhere in the class's methods
  std::unordered_map<std::string_view, std::vector<NodeId>, NameHash> attr_values;
  std::unordered_set<std::string_view, NameHash> attrs_mutated_outside_init;

  Function* find_method(std::string_view name, int depth = 0) const;
  // True when this class or an analysed base derives from one of `qnames` (prefix match on the
  // resolved base name).
  bool derives_from(std::initializer_list<std::string_view> qnames, int depth = 0) const;
};

struct Call {  // 88 bytes: a run holds one per call in the code (90,000 in Debian's torch package)
  Module* mod = nullptr;  // the module holding the call
  Function* fn = nullptr; // enclosing function (null at module level)
  NodeId node = kNone;    // call
  NodeId callee = kNone;  // the call's function expression
  NodeId receiver = kNone;  // the `x` of `x.attr(...)`
  int32_t loop = -1;      // innermost enclosing loop in the same function (index into mod->loops)
  std::string_view method;  // the attribute name when the callee is `x.attr`
  // Phase 3.
  // resolved external name: "torch.save", "builtins.print", "" if unknown (the module's copy,
  // Module::call_qnames)
  std::string_view qname;
  Function* target = nullptr;  // resolved analysed function (a class call resolves to __init__)
  Class* target_class = nullptr;  // the class instantiated, when the callee is an analysed class
  // The target receives the callee's instance as `self` without an argument for it: a class
  // instantiated (`__init__`) or an instance called (`criterion(x, y)` runs `forward`/`__call__`).
  bool implicit_self = false;
};
static_assert(sizeof(void*) != 8 || sizeof(Call) == 88, "Call grew: a run holds one per call");

enum class LoopKind : uint8_t { Other, TrainStep, EvalStep, Epoch };
std::string_view loop_kind_name(LoopKind k);

struct Loop {
  uint32_t index = 0;       // in mod->loops
  NodeId node = kNone;      // for_statement / while_statement
  Function* fn = nullptr;
  int32_t parent = -1;      // enclosing loop in the same function
  std::vector<uint32_t> calls;  // calls lexically inside (nested loops included, nested defs not)
  bool data_loop = false;
  bool runs_once = false;   // the body ends in an unconditional return/break/raise (see collect.cpp)
  bool over_display = false;  // `for n in (0, 2, 10):`: a few values written out, one run each (collect.cpp)
  // Phase 4.
  bool reaches_opt_step = false, reaches_backward = false;
  bool contains_step_loop = false;
  // A training step loop with no data loop each iteration of which also runs an evaluation
  // (`for epoch in range(200): loss = train(); acc = test()`): full-batch training, where one
  // step is one epoch. The per-step work rules treat its iterations as epochs (model_build.cpp
  // full_batch_loops, docs/concepts.md "Full-batch training").
  bool evaluates_each_iteration = false;
  LoopKind kind = LoopKind::Other;
  std::unordered_set<std::string> varying;  // step loops: names that change across iterations
};

struct ArgDef {  // parser.add_argument(...)
  const Module* mod = nullptr;  // the module that declares it (its default is evaluated there)
  std::string dest;
  NodeId default_value = kNone;
  bool has_default = false;
  std::string action;
};

struct Module {
  uint32_t index = 0;
  std::string path;
  std::string key;              // absolute path when known (SourceFile::abs_path): relative imports
  std::string name_path;        // path inside its project (SourceFile::project_path): dotted names
  std::string dotted;           // best dotted name ("pkg.sub.mod")
  // bit k: the dotted name made of this module's last k + 1 components starts inside a package
  // (an analysed `__init__.py` lies in the folder where it starts), so that only a script of that
  // folder, which has it on sys.path, imports the module by that name (ProgramModel::module_for)
  uint8_t inner_names = 0;
  std::unique_ptr<SourceFile> src;
  Tree tree;
  Scope scope;
  std::vector<std::unique_ptr<Function>> functions;
  std::vector<std::unique_ptr<Class>> classes;
  std::vector<Call> calls;
  std::vector<Loop> loops;
  std::vector<ArgDef> argdefs;
  std::vector<NodeId> assignments;            // every assignment / augmented assignment
  std::vector<NodeId> expression_statements;  // every expression statement
  std::vector<std::string> imported_modules;  // qualified names of every import (for linking)
  StringSet call_qnames;  // the external names its calls resolve to (Call::qname), one copy each
  std::deque<std::string> import_qnames;  // the imported names Binding::qname views that the text does not hold
  std::vector<Module*> imports;               // analysed modules imported (phase 2)
  std::vector<std::pair<Module*, NodeId>> star_imports;  // `from analysed import *`
  std::vector<std::pair<std::string, NodeId>> star_import_names;
  // Every function_definition node in pre-order (so sorted), with the index of the nearest one
  // around it (-1 at the top) and its Function (null where the collector did not enter it):
  // enclosing_function's binary search.
  std::vector<NodeId> fn_defs;
  std::vector<int32_t> fn_def_outer;
  std::vector<Function*> fn_def_fn;
  std::unordered_map<NodeId, uint32_t> call_by_node; // call node -> index in calls
  std::unordered_map<NodeId, uint32_t> loop_by_node;
  bool has_main_guard = false;
  // only defines things (imports, functions, classes, assignments; no main guard, no top-level
  // loop, `with` or call): a library, which runs nothing when run as a script (reach.cpp)
  bool defines_only = false;
  std::vector<NodeId> main_guards;  // top-level `if __name__ == "__main__":` statements
  bool has_module_exec = false;  // exec(...) at module level: module globals may be overwritten
  // Phase 4.
  bool is_entry = false;
  // A pytest/unittest module (docs/concepts.md "Test modules"): never an entry script, its loops are not
  // step loops, and only the correctness rules (TL4xx) report in it.
  bool is_test = false;
  std::vector<uint32_t> programs;  // ids of programs this module belongs to

  Function* enclosing_function(NodeId n) const;
  // The Function of a function_definition node (null for other nodes, or where not entered).
  Function* function_of_def(NodeId def) const;
  const Call* call_at(NodeId n) const {
    auto it = call_by_node.find(n);
    return it == call_by_node.end() ? nullptr : &calls[it->second];
  }
  // Does this module belong to a program `o` belongs to too? (Both id lists are sorted.)
  bool shares_program(const Module& o) const {
    for (size_t i = 0, j = 0; i < programs.size() && j < o.programs.size();) {
      if (programs[i] == o.programs[j]) return true;
      (programs[i] < o.programs[j] ? i : j)++;
    }
    return false;
  }
};

// A small value lattice for "simple value facts".
struct Literal {
  enum class Kind : uint8_t { Int, Float, Bool, None, Str } kind = Kind::None;
  std::string text;  // normalised: ints in decimal, bools "True"/"False", strings unquoted
  bool operator==(const Literal&) const = default;
};
struct ValueSet {
  bool unknown = false;        // some value the analysis cannot see
  bool maybe_absent = false;   // (keyword lookups) the keyword may not be passed at all
  std::vector<Literal> values;
  void add(const Literal& l) {
    for (auto& v : values)
      if (v == l) return;
    values.push_back(l);
  }
  void merge(const ValueSet& o) {
    unknown |= o.unknown;
    maybe_absent |= o.maybe_absent;
    for (auto& v : o.values) add(v);
  }
  bool empty() const { return !unknown && !maybe_absent && values.empty(); }
  // Every possible value satisfies pred (absence counts as `absent_ok`); false when unknown.
  template <class P>
  bool all(P pred, bool absent_ok) const {
    if (unknown) return false;
    if (maybe_absent && !absent_ok) return false;
    for (auto& v : values)
      if (!pred(v)) return false;
    return maybe_absent || !values.empty();
  }
  bool is_truthy_literal(const Literal& l) const;
};

struct Program {
  uint32_t id = 0;
  Module* entry = nullptr;
  std::vector<Module*> members;
  // Facts of the code the program runs (docs/concepts.md "Program"): the top level of its members and
  // the functions reachable from it through calls and references.
  bool uses_accelerator = false;
  // Where the program shows it (a placement call, a Lightning module, a name bound to a device):
  // for notes that say why a program counts as training on an accelerator. Null when unknown.
  const Module* accel_mod = nullptr;
  NodeId accel_node = kNone;
  bool has_opt_step = false;
  bool has_backward = false;
  // It trains: an optimizer step or a backward pass runs in it, it reaches a Lightning module, or
  // it builds a library's trainer (`Trainer(...)`, mmengine's `Runner`, an Ignite engine), which
  // runs both. An extraction, inference or data-preparation script does not.
  bool trains = false;
  // It shows it expects an accelerator (rules/docs/TL303): torch.cuda.*, a "cuda" device string,
  // torch.accelerator, a --cuda/--gpu/--device option, the NCCL backend.
  bool accelerator_intent = false;
  // The functions that run when the program runs: their ids, sorted, and (for a program that
  // reaches many of the analysed functions) a bit per function id. A sorted list alone for the
  // others, so that memory grows with what each program reaches, not programs x functions (a tree
  // of 100,000 scripts is 100,000 programs).
  std::vector<uint32_t> reached_ids;
  std::vector<uint64_t> reached_bits;
  // Branches of reached functions that never run in this program: `if use_prefetcher:` in a
  // library function that every caller of the program calls with `use_prefetcher=False`.
  std::unordered_map<const Module*, std::vector<NodeId>> dead_branches;
  bool in_dead_branch(const Module& m, NodeId n) const;
  // The classes referenced by code the program runs: their ids (Class::id), sorted.
  std::vector<uint32_t> reached_class_ids;
  bool reaches_class(const Class* c) const {
    return c && std::binary_search(reached_class_ids.begin(), reached_class_ids.end(), c->id);
  }
  bool reaches(const Function* f) const {
    if (!f) return false;
    if (!reached_bits.empty())
      return f->id / 64 < reached_bits.size() && (reached_bits[f->id / 64] >> (f->id % 64) & 1);
    return std::binary_search(reached_ids.begin(), reached_ids.end(), f->id);
  }
};

// A small type fact for expressions and names (rules/docs/TL401 and friends). Unknown is the
// answer whenever the analysis cannot be sure.
enum class TypeKind : uint8_t { Unknown, Tensor, Module, Device, DataLoader, Optimizer, Number, NumpyArray };
std::string_view type_kind_name(TypeKind k);

// Why a statement runs every step.
struct StepContext {
  const Module* loop_mod = nullptr;
  NodeId loop_node = kNone;  // the step loop (for/while) or the hook's function_definition
  LoopKind kind = LoopKind::TrainStep;
  std::string desc;          // "training step loop", "Lightning hook `training_step`"...
  std::vector<const Call*> chain;  // the calls from the step loop down to the statement's function
  std::vector<const Module*> chain_mods;
};

// How a function is reached every step from a step loop or a hook (internal to the model).
struct CallReach {
  const void* root = nullptr;  // the step loop or hook this reach starts from
  const Module* loop_mod = nullptr;
  NodeId loop_node = kNone;
  LoopKind kind = LoopKind::TrainStep;
  std::string desc;
  std::vector<const Call*> chain;
  std::vector<const Module*> chain_mods;
  std::unordered_set<std::string> varying;  // varying names inside the reached function
  // every call through which this root reaches the function (chain's last, and the others found
  // later): a branch that each of them rules out by a parameter does not run from this root,
  // unless the root also reaches it without a call (a hook, a closure defined in the step)
  std::vector<const Call*> entries;
  bool unconditional = false;
  bool hook = false;
  // a call of the function was left out because every entry ruled it out: a new entry (or an
  // unconditional way in) found later expands the function again (model_build.cpp, step_reach)
  bool pruned = false;
};

// The per-sample input pipeline: Dataset.__getitem__/__iter__, collate and transform functions,
// and what they call.
struct DataPathInfo {
  const Function* root = nullptr;  // the __getitem__ / collate_fn / transform the path starts at
  std::string desc;                // "`__getitem__` of Dataset `Faces`"
  std::vector<const Call*> chain;  // calls from the root down to this function
};

// A Dataset class: derives from torch's Dataset/IterableDataset (or torchvision's VisionDataset),
// directly or through analysed classes, or is named *Dataset and defines __getitem__.
bool is_dataset_class(const Class& c);

class ProgramModel {
 public:
  ProgramModel();
  ~ProgramModel();
  ProgramModel(ProgramModel&&) noexcept;
  ProgramModel& operator=(ProgramModel&&) noexcept;

  // Builds the model of `files` (already read and validated). `threads` >= 1.
  // `cache` (optional) makes re-parses of the same files incremental (see ParseCache); `store`
  // (optional) gives the trees of texts parsed in earlier runs and keeps the new ones.
  static ProgramModel build(std::vector<std::unique_ptr<SourceFile>> files, unsigned threads,
                            ParseCache* cache = nullptr, TreeStore* store = nullptr);

  const std::vector<std::unique_ptr<Module>>& modules() const { return modules_; }
  const std::vector<Program>& programs() const { return programs_; }
  const std::vector<Function*>& functions() const { return functions_; }
  const std::vector<Class*>& classes() const { return classes_; }  // by Class::id
  // How long each phase of build() took, in order, in ms (wall time of the whole phase).
  const std::vector<std::pair<std::string, double>>& build_phases() const { return build_phases_; }

  // ---- questions rules ask -------------------------------------------------------------
  // Does `node` (a statement or expression in `m`) run every step of some step loop? Follows
  // calls from step loops into analysed functions, and framework step hooks.
  // `epoch_steps` false: not through a loop whose every iteration is also an epoch (full-batch
  // training, Loop::evaluates_each_iteration), for the rules of work that is normal once an epoch.
  std::optional<StepContext> runs_every_step(const Module& m, NodeId node, bool epoch_steps = true) const;
  // Can runs_every_step answer yes for any node of `m`: does it hold a step loop, or a function
  // reached every step? False for most modules of a library; a rule whose every report asks
  // runs_every_step may skip a module without any.
  bool has_step_code(const Module& m) const { return m.index < step_code_.size() && step_code_[m.index]; }
  // Does `node` run every step of the step loop `loop_node` in `loop_mod` (lexically inside it,
  // or in a function it calls)? As runs_every_step, for one given loop.
  bool runs_every_step_of(const Module& m, NodeId node, const Module& loop_mod, NodeId loop_node) const;
  // The step loops in `m`, for notes and program-level rules.
  const Loop* loop_of(const Module& m, NodeId loop_node) const;

  // Qualified name of an expression ("torch.nn.DataParallel"), following imports and aliases;
  // empty when the name is local, unknown or shadowed.
  std::string qualified_name(const Module& m, NodeId expr) const;
  // A call's value for keyword `kw` (or positional index `pos` when >= 0), following
  // `**kwargs` dicts, variables, argparse defaults and conditional expressions.
  ValueSet keyword_values(const Module& m, const Call& c, std::string_view kw, int pos = -1) const;
  ValueSet eval(const Module& m, NodeId expr, int depth = 0) const;
  // The keyword argument node, or kNone.
  NodeId keyword_arg(const Module& m, const Call& c, std::string_view kw) const;
  NodeId positional_arg(const Module& m, const Call& c, size_t i) const;
  size_t positional_count(const Module& m, const Call& c) const;
  bool has_splat(const Module& m, const Call& c) const;

  // docs/concepts.md "optimizer step": optimizer.step(), scaler.step(opt), a framework's step.
  bool is_optimizer_step(const Module& m, const Call& c) const;
  // `c` steps a reinforcement-learning environment: `.step(...)` (with `reset_too`, also
  // `.reset()`) on a receiver named like one (`env`, `envs`, `self.train_env`) or made by
  // gym/gymnasium.
  bool steps_environment(const Module& m, const Call& c, bool reset_too) const;
  // Every analysed function of this name returns a `%` test (`should_log`): a predicate that
  // makes an early exit periodic, where the call's receiver cannot be resolved. Memoised.
  bool periodic_predicate_name(std::string_view name) const;
  // A backward pass: x.backward(), manual_backward(...), torch.autograd.backward(...).
  static bool is_backward(const Call& c);

  // Origins of a name or attribute: the qualified names of the calls whose results it is bound
  // to (e.g. "torch.utils.data.DataLoader", "PIL.Image.open"), or "class:<qualname>" for analysed
  // classes. Empty when unknown.
  // `before`: ignore bindings made at or after this byte offset in the same function (order
  // matters for "saved before it was wrapped").
  std::vector<std::string> origins(const Module& m, NodeId expr, uint32_t before = UINT32_MAX) const;
  // The bindings of an identifier in the innermost scope that binds it (Python's rules), or null.
  const Bindings* bindings_of(const Module& m, NodeId identifier) const;
  // The analysed class of an instance expression (`agent` where `agent = Agent()`), or null.
  const Class* instance_class(const Module& m, NodeId expr) const;
  bool programs_use_accelerator(const Module& m) const;
  // Does `node` run in some program of `m` that uses an accelerator?
  bool runs_in_accelerator_program(const Module& m, NodeId node) const;
  // The same, for a program that also trains (Program::trains).
  bool runs_in_training_accelerator_program(const Module& m, NodeId node) const;
  // Does `node` of `m` run when program `p` runs: the top level of a member module (the
  // `__main__` block only in the entry script), or a function reachable from it?
  bool runs_in_program(const Program& p, const Module& m, NodeId node) const;
  // Does the call initialise CUDA (`.cuda()`, `.to(<cuda device>)`, `torch.cuda.set_device`,
  // tensor creation on a CUDA device, `torch.cuda.synchronize`...)?
  bool initialises_cuda(const Module& m, const Call& c) const;
  // Following the calls from the entry scripts in execution order: the call that has surely
  // initialised CUDA before `f` is entered on some path, or null.
  const Call* cuda_initialised_before(const Function* f) const {
    return f && f->id < cuda_init_at_entry_.size() ? cuda_init_at_entry_[f->id] : nullptr;
  }
  // How a DataLoader's dataset holds its samples (rules/docs/TL201).
  enum class DatasetStorage : uint8_t {
    Unknown,
    InMemory,   // a TensorDataset, or __getitem__ only indexes tensors/arrays built in __init__
    LiveState,  // an IterableDataset whose __iter__ reads state training changes or calls a model
    Unsharded,  // an IterableDataset that never asks which worker it runs in: workers would each
                // yield the whole stream
    Tokens,     // a `datasets` table tokenized ahead (`.map` through a tokenizer): a sample is a
                // row of token ids read from memory, a batch a few KB
    Indices,    // indices in memory (`range(n)`, `torch.randperm(n)`, `mask.nonzero().view(-1)`): a
                // batch is a few integers, and the step gathers the features itself
    HostValues, // samples of strings and numbers kept by the dataset, with the index (a prompt to
                // generate images from and its number): nothing to load, and no tensor to pin
    OnDevice,   // samples already on the accelerator: __getitem__ moves them there (`x.cuda()`), or
                // indexes tensors __init__ placed there; workers cannot hand CUDA tensors over from
                // forked processes, and pinning them raises
  };
  // The storage of the dataset expression `ds` (a DataLoader's first argument), followed through
  // names, attributes, parameters, factories and Subset/random_split.
  DatasetStorage dataset_storage(const Module& m, NodeId ds) const;
  // The dataset a DataLoader call is given (`dataset=` or its first argument), or kNone.
  NodeId loader_dataset(const Module& m, const Call& loader) const;
  // The storage of an analysed dataset class, from its own methods.
  DatasetStorage class_dataset_storage(const Class& c) const;
  const Class* class_of(const Module& m, NodeId class_def) const;
  // The type fact of an expression: from factories and constructors, loader iteration targets,
  // annotations, analysed nn.Module subclasses, and methods that keep their receiver's type.
  TypeKind type_of(const Module& m, NodeId expr, int depth = 0) const;
  // Is `expr` (an argument of `.to(...)` or `device=`) possibly an accelerator device?
  bool is_accelerator_device(const Module& m, NodeId expr) const;
  // Is `expr` certainly on an accelerator where it is read? A name whose reaching assignment in
  // straight-line code is `.cuda()`, `.to(<accelerator device>)`, a factory with such a `device=`,
  // or the output of a model moved there the same way; unknown placement is false.
  bool on_accelerator(const Module& m, NodeId expr, int depth = 0) const;
  // What reaches a read of the name `ident` in straight-line code: the value of the nearest
  // assignment before it (`value`), or a `name.to(...)`/`name.cuda()` statement met first
  // (`in_place`, the call). Both kNone when a loop, a branch or another binding is on the way.
  struct Reaching {
    NodeId value = kNone;
    NodeId in_place = kNone;
  };
  Reaching reaching(const Module& m, NodeId ident) const;
  // Does `node` run in every iteration of the innermost epoch loop around it (same function, not
  // under a guard that varies across epochs)? False when no epoch loop encloses it.
  bool runs_every_epoch(const Module& m, NodeId node) const;
  // The number of positional parameters the caller does not pass (a bound `self`): 1 for a
  // method called through a receiver, a class instantiated or an instance called; else 0.
  static size_t implicit_args(const Call& c, const Function& target);
  // Is the analysed class an nn.Module subclass (directly or through analysed bases)?
  static bool is_nn_module_class(const Class& c);
  // Functions called (transitively) from inside an epoch loop.
  bool called_from_epoch_loop(const Function* f) const {
    return f && f->id < epoch_reached_.size() && epoch_reached_[f->id];
  }
  // Call sites of an analysed function (for parameter-to-argument questions).
  const std::vector<const Call*>& callers_of(const Function* f) const;
  // The statement that contains `n` (the ancestor whose parent is a block or the module).
  static NodeId statement_of(const Tree& t, NodeId n);
  // Is `n` lexically inside a `with` whose context manager's call resolves to one of `qnames`
  // (between n and the enclosing function)?
  bool inside_with(const Module& m, NodeId n, std::initializer_list<std::string_view> qnames) const;
  // Loops in every module that can be iterated per step, for program-level rules.
  const Loop* enclosing_loop(const Module& m, NodeId n) const;
  // Resolve an expression to an analysed function (def, self.method, instance method).
  Function* resolve_function(const Module& m, NodeId expr) const;
  // Non-null when `f` runs per sample in the input pipeline.
  const DataPathInfo* data_path(const Function* f) const {
    return f && f->id < data_path_.size() && data_path_[f->id] ? data_path_[f->id].get() : nullptr;
  }

 private:
  friend struct ModelBuilder;
  friend struct ProgramReach;
  // (reach.cpp) functions and classes handed on as values somewhere: their callers are unknown;
  // classes other analysed classes derive from: a subclass may set their attributes otherwise
  std::vector<char> fn_referenced_;
  std::unordered_set<const Class*> class_referenced_;
  std::unordered_set<const Class*> class_has_subclass_;
  std::vector<std::unique_ptr<Module>> modules_;
  std::vector<Function*> functions_;
  std::vector<Class*> classes_;  // by Class::id
  std::vector<std::pair<std::string, double>> build_phases_;
  std::vector<Program> programs_;
  std::unordered_map<std::string, std::vector<Module*>> by_dotted_;  // every dotted suffix
  // relative_module()'s answers, by the importing file's folder and the relative name: the same
  // `from .utils import x` is looked up for every use of `x`, and each answer costs path
  // normalisation. Filled by the link passes' threads (hence the locks); by_dotted_ is final by then.
  struct RelativeModuleMemo {
    struct Shard {
      std::mutex mu;
      std::unordered_map<std::string, std::pair<Module*, std::string>> answers;
    };
    std::array<Shard, 16> shards;
  };
  mutable std::unique_ptr<RelativeModuleMemo> relative_memo_ = std::make_unique<RelativeModuleMemo>();
  struct PredicateMemo {
    std::mutex mu;
    std::unordered_map<std::string, bool> answers;
  };
  mutable std::unique_ptr<PredicateMemo> predicate_memo_ = std::make_unique<PredicateMemo>();
  Module* relative_module_uncached(const Module& from, const std::string& q, std::string* rest) const;
  std::unordered_map<std::string, std::vector<ArgDef*>> argdefs_;    // dest -> definitions
  std::unordered_set<std::string> cuda_names_;  // names bound to accelerator devices
  // per (function id): reach records from step loops
  std::vector<std::vector<std::unique_ptr<CallReach>>> reach_;
  std::vector<std::unique_ptr<DataPathInfo>> data_path_;  // per function id
  std::vector<char> epoch_reached_;                       // per function id
  std::vector<std::vector<const Call*>> callers_;         // per function id
  std::vector<char> step_code_;                           // per module index (has_step_code)
  // Accelerator device names (`gpu`, `device = "cuda"`, `args.local_rank`): a program's are those of
  // its members. Every module holds kDefaultDeviceNames; the others, by name, the indices of the
  // modules that bind them (is_accelerator_device asks whether one shares a program with the
  // module asking: no set per program, which cost programs x members x names to fill).
  static constexpr std::array<std::string_view, 6> kDefaultDeviceNames = {"local_rank", "rank", "gpu",
                                                                          "gpu_id", "device_id", "local_device"};
  std::unordered_map<std::string, std::vector<uint32_t>, NameHash, std::equal_to<>> accel_name_modules_;
  bool accel_names_ready_ = false;  // accelerator_facts has filled the above (no name holds before)
  std::unordered_set<const Function*> device_fns_;        // functions that return a device
  // Parameters that every analysed caller fills with an instance of one analysed class
  // (`def train(model, criterion, loss_scaler)` called as `train(m, LabelSmoothing(), scaler)`).
  std::unordered_map<const Function*, std::unordered_map<std::string_view, Class*, NameHash>> param_instances_;
  std::vector<const Call*> cuda_init_at_entry_;           // per function id (see cuda_initialised_before)

  struct Resolved {
    enum class Kind : uint8_t { None, External, Function, Class, Module, Instance } kind = Kind::None;
    std::string qname;
    Function* fn = nullptr;
    Class* cls = nullptr;
    Module* mod = nullptr;
  };
  Resolved resolve(const Module& m, NodeId expr, const Scope* scope, int depth) const;
  // How many times resolve() on this thread has met a lone parameter binding, the one place where
  // param_instances_ can change its answer: a resolution during which the count did not move
  // gives the same answer after new parameter instances are found (model_build.cpp).
  static uint64_t param_lookups();
  Module* module_for(std::string_view qname, std::string* rest, const Module* from = nullptr) const;
  // The folder where the dotted name of `m` made of its last `parts` components starts, and the
  // Module::inner_names bits of `m` (index_modules: after every module's path is indexed).
  static std::string name_start_folder(const Module& m, size_t parts);
  uint8_t inner_names_of(const Module& m) const;
  // A relative import (".utils.x", "..pkg") of `from`: the analysed module named by the longest
  // prefix of its components, and the remaining dotted names in `rest`; null when not analysed.
  Module* relative_module(const Module& from, const std::string& q, std::string* rest) const;
  const Scope* scope_at(const Module& m, NodeId n) const;
  void tuple_element_origins(const Module& m, NodeId assign, std::string_view name, NodeId call,
                             std::vector<std::string>& out) const;
  bool enumerates(const Module& m, NodeId iterable, int depth = 0) const;
  bool whole_batch_target(const Module& m, NodeId for_stmt, std::string_view name) const;
  TypeKind param_type_from_callers(const Module& m, const Function* f, std::string_view param, int depth) const;
  ValueSet dict_key_values(const Module& m, NodeId dict_expr, std::string_view key, int depth) const;
};

// Does the expression mention an accelerator device (a "cuda"/"mps"/"xpu" string,
// current_accelerator(), accelerator.device)? Syntactic; names are judged by the model.
bool mentions_accelerator(const Tree& t, NodeId v);

// Names that hold configuration or a framework handle (`args.device`, `self.device`,
// `trainer.device`): their `.device` is a device setting, judged by name like any device; the
// `.device` of any other value (`x.device`) follows that value's placement.
bool config_like_name(std::string_view n);

// Small syntax helpers shared by the model and rules.
std::string_view last_component(std::string_view dotted);
// ASCII case folding (what std::tolower does in the C locale, without a call per character: it
// runs for every call of every file, and for every identifier in the accelerator-intent pass).
inline char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + ('a' - 'A')) : c; }
bool icontains(std::string_view hay, std::string_view needle);
// The last statement of a block (comments left out); kNone when it has none.
NodeId last_statement(const Tree& t, NodeId block);
// The dotted text of a name / attribute chain ("self.train_loader"); empty for other shapes.
std::string dotted_text(const Tree& t, NodeId n);
std::string string_literal_value(const Tree& t, NodeId n);  // "" when not a plain string
// The byte ranges of branches a literal condition rules out: the body of `if False:` / `if 0:` /
// `elif None:`, and every branch after one whose condition is `True` or a non-zero integer (the
// `else:` of `if 1:`). That code never runs; findings in it are dropped.
std::vector<std::pair<uint32_t, uint32_t>> dead_branches(const Tree& t);

}  // namespace tl::py
