// The C++ program model: plain data that the C++ rules read (rules/cpp). It is front-end
// neutral: the fast path (tree-sitter, model_build.cpp) fills it from declarations in the analysed
// files; a typed front end can fill the same structures with exact types. Nothing here exposes a
// parser type. Ranges are byte offsets plus 1-based line/column, as everywhere in trainlint.
//
// What it holds (docs/concepts.md has the notions): translation units, classes (LibTorch modules
// `struct NetImpl : torch::nn::Module` and their `TORCH_MODULE(Net)` holders), functions with
// qualified names, variables with their inferred LibTorch type, call sites (callee, receiver and
// receiver type), `operator<<` stream writes, loops classified as step / epoch loops, guards
// (varying or not), the call graph across the files of the run, programs (a TU with `main` plus
// the TUs whose functions it calls) and device facts (what may be CUDA).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analyzer/core/finding.h"
#include "analyzer/core/source_file.h"

namespace tl::cpp {

// What the inference knows about a value. Unknown whenever it is not certain (precision first).
enum class TypeKind : uint8_t {
  Unknown,
  Tensor,        // at::Tensor / torch::Tensor
  Module,        // an object of a torch::nn::Module subclass (`NetImpl net;`)
  ModuleHolder,  // a module holder or pointer to a module: `torch::nn::Linear`, `Net` of
                 // TORCH_MODULE(Net), `std::shared_ptr<NetImpl>`; `->to()` works in place
  Optimizer,     // torch::optim::SGD, Adam, ...
  DataLoader,    // the result of torch::data::make_data_loader (a unique_ptr; iterate `*loader`)
  Batch,         // an element of a data loader: `batch.data` / `batch.target` are tensors
  Device,        // torch::Device / torch::DeviceType
  GradGuard,     // torch::NoGradGuard, torch::AutoGradMode(false), c10::InferenceMode
  Other,         // a known type that is none of the above
};
std::string_view type_kind_name(TypeKind k);

struct Type {
  TypeKind kind = TypeKind::Unknown;
  std::string name;  // qualified class name when known ("torch::nn::Conv2d", "NetImpl")
};

struct Variable {
  std::string name;
  Type type;
  uint32_t tu = 0;
  int32_t function = -1;  // the function it is local to; -1 at namespace scope or a class member
  int32_t cls = -1;       // the class it is a data member of
  bool parameter = false;
  bool may_cuda = false;  // a device (or value) that may be CUDA (docs/concepts.md "accelerator")
  std::string init;       // the initializer's text ("" when none)
  Range decl;             // the declarator
  uint32_t scope_end = 0; // byte offset where the enclosing block ends (visibility)
};

// A guard: an `if` / `else` / ternary / `&&` / `||` condition that decides whether code under it
// runs.
struct Guard {
  Range condition;
  bool varying = false;  // `%`, the loop variable, a counter changed in the loop...
  int32_t loop = -1;     // the innermost loop around the guard (same function), -1: none
};

// Where code runs: the file, function, innermost loop (same function) and the guards around it.
struct Site {
  uint32_t tu = 0;
  int32_t function = -1;        // -1: namespace scope (a global's initializer)
  int32_t loop = -1;            // innermost enclosing loop in the same function
  std::vector<uint32_t> guards; // indices into Model::guards(), outermost first, same function
  Range range;                  // the expression
  Range statement;              // the statement it belongs to (suppressions, fingerprints)
};

struct CallSite : Site {
  uint32_t id = 0;
  // Free calls and constructions: the qualified callee after namespace aliases and `using
  // namespace` ("torch::save", "torch::optim::SGD", "train"). Member calls: the method name
  // qualified by the receiver's class when known ("NetImpl::forward"), else just the method.
  std::string callee;
  std::string method;          // member calls: "to", "item", "backward"; empty for free calls
  std::string receiver;        // the receiver expression's text (member calls)
  Type receiver_type;
  bool arrow = false;          // receiver->method(...)
  bool construction = false;   // declares or builds an object of type `callee`
  bool holder_call = false;    // calling a module object or holder: `net(x)` (reaches forward)
  bool discarded = false;      // the whole call is an expression statement; its value is dropped
  std::vector<std::string> args;
  std::vector<Range> arg_ranges;
  std::string template_args;   // `item<float>()` -> "float"
  Type result;                 // the inferred type of the call's value
  int32_t target = -1;         // the analysed function it calls (-1: a library or unknown)
  int32_t receiver_call = -1;  // the receiver is itself a call: its id (`torch::zeros(...).to(d)`)
  bool places_on_cuda = false; // `.to(<may-be-CUDA>)`, `.cuda()`, a factory with a CUDA device
  // Member calls: the receiver is a tensor known to live in host memory (docs/concepts.md
  // "host-resident tensor"): `.item()` on it reads host memory and waits for no GPU.
  bool receiver_on_host = false;
};

// `std::cout << a << b`: one per outermost `<<` chain written to a stream.
struct StreamWrite : Site {
  std::string stream;                  // "std::cout", "std::cerr", "os"...
  std::vector<std::string> operands;   // the written operands, in order
  std::vector<Type> operand_types;
  std::vector<char> operand_on_host;   // per operand: a tensor known to live in host memory
};

enum class LoopKind : uint8_t { Other, TrainingStep, EvaluationStep, Epoch };
std::string_view loop_kind_name(LoopKind k);

struct Loop {
  uint32_t id = 0;
  uint32_t tu = 0;
  int32_t function = -1;
  int32_t parent = -1;           // the enclosing loop in the same function
  LoopKind kind = LoopKind::Other;
  bool data_loop = false;        // iterates a data loader (docs/concepts.md "data loop")
  bool calls_backward = false;   // its body (nested loops and called functions included)
  bool calls_optimizer_step = false;
  std::string loop_var;          // range-for variable, for-init variable
  std::vector<std::string> changed;  // names assigned / incremented in the body
  Range range;                   // the whole loop
  Range header;                  // `for (...)` / `while (...)`
};

struct Function {
  uint32_t id = 0;
  uint32_t tu = 0;
  std::string name;            // "forward"
  std::string qualified_name;  // "NetImpl::forward", "train", "ns::helper"
  std::string cls;             // the class for a method ("NetImpl"), else ""
  Type return_type;
  std::vector<uint32_t> params;     // variable indices
  std::vector<uint32_t> calls;      // call ids made in its body
  std::vector<uint32_t> callers;    // call ids that target it
  bool is_main = false;
  Range range;
  Range name_range;
};

struct Class {
  std::string name;            // "NetImpl"
  std::string qualified_name;
  uint32_t tu = 0;
  std::vector<std::string> bases;  // qualified base names
  bool is_module = false;      // derives from torch::nn::Module (directly or via analysed classes)
  std::string holder;          // TORCH_MODULE(Net) -> "Net"
  std::vector<uint32_t> members;  // variable indices
  Range range;
};

struct TranslationUnit {
  uint32_t index = 0;
  const SourceFile* src = nullptr;
  std::string path;
  // Namespace scope only; block-scope using-directives, using-declarations and aliases apply to
  // the rest of their block while the model is built and are already folded into the callees.
  std::vector<std::string> using_namespaces;             // "torch", "torch::nn"
  std::map<std::string, std::string> namespace_aliases;  // "nn" -> "torch::nn"
  std::map<std::string, std::string> using_declarations; // "data_parallel" -> "torch::nn::parallel::data_parallel"
  std::vector<std::pair<LineCol, std::string>> syntax_errors;
  std::vector<uint32_t> programs;  // programs it belongs to
};

struct Program {
  uint32_t id = 0;
  uint32_t entry = 0;                  // the TU with `main`
  int32_t main = -1;                   // the main function
  std::vector<uint32_t> members;       // TUs, entry first
  std::vector<uint32_t> functions;     // functions reachable from main, main first
  bool on_cuda = false;                // places a module or tensors on a device that may be CUDA
  bool has_optimizer_step = false;
};

// Why a site runs every step: the step loop and the calls from it down to the site's function.
struct StepContext {
  uint32_t loop = 0;
  std::vector<uint32_t> chain;  // call ids, from the step loop's body down
};

// Exact types from the typed front end (analyzer/cpp_clang), for one file, keyed by byte offsets
// in that file: what the fast path's inference would otherwise guess. The model's builder reads
// them where it types a declaration or a call, and keeps its own where they say nothing.
struct TypedCall {
  Type receiver;  // member calls: the object's type (after `->` on a holder: the module)
  Type result;    // the call's value
};
struct TypedFile {
  std::unordered_map<uint32_t, Type> decls;        // at a declaration's name: a variable's, a
                                                   // parameter's, a data member's type; a
                                                   // function's return type
  std::unordered_map<uint32_t, TypedCall> member_calls;  // at the method name: x.to(...), net->to(...)
  std::unordered_map<uint32_t, TypedCall> calls;         // at the start of a free call: torch::randn(...)
};
using TypedFacts = std::unordered_map<std::string, TypedFile>;  // by SourceFile::path()

class Model {
 public:
  // Builds the model of the C++ files of one run (each file is one translation unit; headers
  // included by several are analysed once, as their own unit). The SourceFiles must outlive the
  // model. `typed` (the typed front end's facts, may be null) gives exact types where it has them.
  // The files are parsed on up to `threads` threads; the model does not depend on how many.
  static Model build(const std::vector<const SourceFile*>& files, const TypedFacts* typed = nullptr,
                     unsigned threads = 1);

  const std::vector<TranslationUnit>& translation_units() const { return tus_; }
  const std::vector<Function>& functions() const { return functions_; }
  const std::vector<Class>& classes() const { return classes_; }
  const std::vector<Variable>& variables() const { return variables_; }
  const std::vector<CallSite>& calls() const { return calls_; }
  const std::vector<StreamWrite>& stream_writes() const { return streams_; }
  const std::vector<Loop>& loops() const { return loops_; }
  const std::vector<Guard>& guards() const { return guards_; }
  const std::vector<Program>& programs() const { return programs_; }

  // docs/concepts.md "Runs every step": the site is in a step loop (or a loop nested in one, or a
  // function a step loop calls, followed up to 6 calls deep across files) and no varying guard
  // between the step loop and the site. nullopt otherwise.
  std::optional<StepContext> runs_every_step(const Site& s) const;
  // Is any program the TU belongs to training on a device that may be CUDA? A TU in no program
  // (a library file without `main`) answers for itself: does it place anything on CUDA?
  bool on_cuda(uint32_t tu) const;
  // Does the site lie in code that program `p` runs (a function reachable from its main, or a
  // member TU's namespace scope)?
  bool runs_in_program(const Program& p, const Site& s) const;
  // "training step loop", "evaluation step loop", ...
  static std::string describe(const Loop& l);
  // The function with this qualified name, or -1.
  int32_t find_function(std::string_view qualified_name) const;
  // The variable named `name` visible at byte `offset` of function `fn` in `tu` (locals and
  // parameters, then the members of its class, then namespace scope); -1 when none. Indexed by
  // scope and name: a lookup costs the variables of that name in that function, not the model.
  int32_t lookup(uint32_t tu, int32_t fn, std::string_view name, uint32_t offset) const;
  // The locals and parameters of function `fn` (variable indices, in declaration order).
  const std::vector<uint32_t>& locals(int32_t fn) const;

 private:
  friend struct Builder;
  std::vector<TranslationUnit> tus_;
  std::vector<Function> functions_;
  std::vector<Class> classes_;
  std::vector<Variable> variables_;
  std::vector<CallSite> calls_;
  std::vector<StreamWrite> streams_;
  std::vector<Loop> loops_;
  std::vector<Guard> guards_;
  std::vector<Program> programs_;
  // reach_[f]: how function f is reached every step (loop id + call chain), if it is
  std::vector<std::optional<StepContext>> reach_;
  std::vector<std::vector<uint32_t>> reachable_by_program_;  // sorted function ids per program
  std::vector<char> tu_places_on_cuda_;  // per TU: a call in it places something on CUDA

  // lookup's index: variables by (function, name), (class, name) and (TU, name) at namespace
  // scope, each list in declaration order
  struct ScopeName {
    int64_t scope;
    std::string name;
    bool operator==(const ScopeName&) const = default;
  };
  struct ScopeNameHash {
    size_t operator()(const ScopeName& k) const {
      return std::hash<std::string>{}(k.name) * 31 + std::hash<int64_t>{}(k.scope);
    }
  };
  std::unordered_map<ScopeName, std::vector<uint32_t>, ScopeNameHash> by_scope_name_;
  std::unordered_map<std::string, std::vector<uint32_t>> classes_by_name_;  // name -> indices
  std::vector<std::vector<uint32_t>> locals_;               // per function
  void index_variable(uint32_t v);
};

}  // namespace tl::cpp
