// Type facts and small structural queries of the model (docs/concepts.md: tensor vs
// module, evaluation context, devices).
#include <cctype>
#include <unordered_set>
#include <vector>

#include "analyzer/python/guards.h"
#include "analyzer/python/model.h"

namespace tl::py {

std::string_view type_kind_name(TypeKind k) {
  switch (k) {
    case TypeKind::Tensor: return "tensor";
    case TypeKind::Module: return "module";
    case TypeKind::Device: return "device";
    case TypeKind::DataLoader: return "DataLoader";
    case TypeKind::Optimizer: return "optimizer";
    case TypeKind::Number: return "number";
    case TypeKind::NumpyArray: return "numpy array";
    default: return "unknown";
  }
}

bool mentions_accelerator(const Tree& t, NodeId v) {
  if (v == kNone) return false;
  thread_local std::vector<NodeId> stack;  // reused: called for most values of every module
  stack.assign(1, v);
  int budget = 2000;
  while (!stack.empty() && budget-- > 0) {
    NodeId x = stack.back();
    stack.pop_back();
    if (t.is(x, K::String)) {
      auto s = t.text(x);
      if (s.find("cuda") != std::string_view::npos || s.find("mps") != std::string_view::npos ||
          s.find("xpu") != std::string_view::npos)
        return true;
    }
    if (t.is(x, K::Attribute) || t.is(x, K::Identifier)) {
      auto s = t.text(x);
      if (s.find("current_accelerator") != std::string_view::npos || s == "accelerator.device" ||
          s.find("current_device") != std::string_view::npos)
        return true;
    }
    for (NodeId c = t.first_child(x); c != kNone; c = t.next_sibling(c))
      if (t[c].named) stack.push_back(c);
  }
  return false;
}

bool ProgramModel::is_nn_module_class(const Class& c) {
  for (int guard = 0; guard < 1; ++guard) {
    auto check = [](const Class& k, auto& self, int d) -> bool {
      for (auto& b : k.bases) {
        if (b == "torch.nn.Module" || b == "torch.nn.modules.module.Module" || b.rfind("torch.nn.", 0) == 0) return true;
        if ((b.rfind("pytorch_lightning", 0) == 0 || b.rfind("lightning", 0) == 0) &&
            last_component(b) == "LightningModule")
          return true;
        if (b.rfind("transformers.", 0) == 0 && (icontains(b, "PreTrainedModel") || icontains(b, "Model")))
          return true;
      }
      if (d > 8) return false;
      for (Class* lb : k.local_bases)
        if (lb != &k && self(*lb, self, d + 1)) return true;
      return false;
    };
    return check(c, check, 0);
  }
  return false;
}

size_t ProgramModel::implicit_args(const Call& c, const Function& target) {
  if (target.params.empty() || (target.params[0] != "self" && target.params[0] != "cls")) return 0;
  return (c.receiver != kNone || c.target_class || c.implicit_self) ? 1 : 0;
}

const std::vector<const Call*>& ProgramModel::callers_of(const Function* f) const {
  static const std::vector<const Call*> none;
  if (!f || f->id >= callers_.size()) return none;
  return callers_[f->id];
}

NodeId ProgramModel::statement_of(const Tree& t, NodeId n) {
  NodeId cur = n;
  for (NodeId p = t.parent(n); p != kNone; cur = p, p = t.parent(p))
    if (t.is(p, K::Block) || t.is(p, K::Module)) return cur;
  return cur;
}

bool ProgramModel::inside_with(const Module& m, NodeId n, std::initializer_list<std::string_view> qnames) const {
  const Tree& t = m.tree;
  for (NodeId p = t.parent(n); p != kNone; p = t.parent(p)) {
    if (t.is(p, K::FunctionDefinition) || t.is(p, K::ClassDefinition)) return false;
    if (!t.is(p, K::WithStatement)) continue;
    std::vector<NodeId> stack{p};
    while (!stack.empty()) {
      NodeId x = stack.back();
      stack.pop_back();
      if (t.is(x, K::Block)) continue;
      if (t.is(x, K::WithItem)) {
        NodeId v = t.field(x, F::Value);
        if (v != kNone && t.is(v, K::AsPattern)) v = t.first_named_child(v);
        if (v != kNone && t.is(v, K::Call))
          if (const Call* c = m.call_at(v))
            for (auto q : qnames)
              if (c->qname == q) return true;
        continue;
      }
      for (NodeId c = t.first_child(x); c != kNone; c = t.next_sibling(c))
        if (t[c].named) stack.push_back(c);
    }
  }
  return false;
}

const Loop* ProgramModel::enclosing_loop(const Module& m, NodeId n) const {
  const Tree& t = m.tree;
  for (NodeId p = t.parent(n); p != kNone; p = t.parent(p)) {
    if (t.is(p, K::FunctionDefinition) || t.is(p, K::ClassDefinition)) return nullptr;
    if (t.is(p, K::ForStatement) || t.is(p, K::WhileStatement)) {
      NodeId body = t.field(p, F::Body);
      if (body != kNone && t.contains(body, n)) return loop_of(m, p);
    }
  }
  return nullptr;
}

bool config_like_name(std::string_view n) {
  static const char* names[] = {"self", "args", "opt", "opts", "cfg", "config", "conf", "hparams", "hp", "flags",
                                "FLAGS", "options", "params", "trainer", "fabric", "accelerator", "runner", "engine",
                                "env", "settings", "a"};
  for (auto* x : names)
    if (n == x) return true;
  return false;
}

bool ProgramModel::is_accelerator_device(const Module& m, NodeId expr) const {
  if (expr == kNone) return false;
  const Tree& t = m.tree;
  if (mentions_accelerator(t, expr)) return true;
  // `x.device` of a value (a tensor, a model output): an accelerator device only when `x` is
  // known to be on one; its placement is otherwise unknown (rules/docs/TL305)
  if (t.is(expr, K::Attribute)) {
    NodeId obj = t.field(expr, F::Object), attr = t.field(expr, F::Attribute);
    if (obj != kNone && attr != kNone && t.text(attr) == "device" && t.is(obj, K::Identifier) &&
        !config_like_name(t.text(obj)))
      return on_accelerator(m, obj);
  }
  std::string d = dotted_text(t, expr);
  if (!d.empty()) {
    std::string_view last = last_component(d);
    // a name of one of the module's programs: every program's members hold the default names;
    // another name, where a module that binds it shares a program with this one
    if (accel_names_ready_ && !m.programs.empty() &&
        std::find(kDefaultDeviceNames.begin(), kDefaultDeviceNames.end(), last) != kDefaultDeviceNames.end())
      return true;
    if (auto it = accel_name_modules_.find(last); it != accel_name_modules_.end())
      for (uint32_t n : it->second)
        if (modules_[n]->shares_program(m)) return true;
  }
  if (t.is(expr, K::Call))
    if (const Call* c = m.call_at(expr); c && c->target && device_fns_.count(c->target)) return true;
  return false;
}

namespace {

// Tensor methods whose result lives where their receiver does.
bool keeps_placement(std::string_view m) {
  static const char* names[] = {"float", "half", "double", "bfloat16", "long", "int", "bool", "detach", "clone",
                                "contiguous", "view", "reshape", "squeeze", "unsqueeze", "permute", "transpose",
                                "flatten", "requires_grad_", "mean", "sum", "softmax", "sigmoid"};
  for (auto* n : names)
    if (m == n) return true;
  return false;
}

// The type a parameter annotation names: `torch.Tensor`, `Optional[Tensor]`, `Tensor | None`,
// `"torch.FloatTensor"`, a jaxtyping `Float[Tensor, "b c"]`, an `nn.Module`. A container of
// tensors (`dict[str, torch.Tensor]`, `List[Tensor]`, `Sequence[torch.Tensor]`) is no tensor.
TypeKind annotation_type(std::string_view a, int depth = 0) {
  auto trim = [](std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '"' || s.front() == '\'')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '"' || s.back() == '\'')) s.remove_suffix(1);
    return s;
  };
  a = trim(a);
  if (a.empty() || depth > 4) return TypeKind::Unknown;
  // the alternatives of a union at the top level (`A | B`, `Union[A, B]`, `Optional[A]`): None
  // dropped, the others must agree
  auto split_top = [](std::string_view s, char sep) {
    std::vector<std::string_view> parts;
    int level = 0;
    size_t from = 0;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '[' || s[i] == '(') ++level;
      else if (s[i] == ']' || s[i] == ')') --level;
      else if (s[i] == sep && level == 0) {
        parts.push_back(s.substr(from, i - from));
        from = i + 1;
      }
    }
    parts.push_back(s.substr(from));
    return parts;
  };
  auto agree = [&](const std::vector<std::string_view>& alts) {
    TypeKind k = TypeKind::Unknown;
    bool first = true;
    for (std::string_view alt : alts) {
      alt = trim(alt);
      if (alt == "None") continue;
      TypeKind ak = annotation_type(alt, depth + 1);
      if (ak == TypeKind::Unknown || (!first && ak != k)) return TypeKind::Unknown;
      k = ak;
      first = false;
    }
    return k;
  };
  if (auto alts = split_top(a, '|'); alts.size() > 1) return agree(alts);
  size_t open = a.find('[');
  std::string_view head = open == std::string_view::npos ? a : a.substr(0, open);
  std::string_view last = head.substr(head.rfind('.') == std::string_view::npos ? 0 : head.rfind('.') + 1);
  if (open != std::string_view::npos) {
    if (a.back() != ']') return TypeKind::Unknown;
    std::string_view inner = a.substr(open + 1, a.size() - open - 2);
    if (last == "Optional" || last == "Union") return agree(split_top(inner, ','));
    if (last == "Annotated") return annotation_type(split_top(inner, ',')[0], depth + 1);
    // jaxtyping / torchtyping: the array type is the first argument
    static const std::unordered_set<std::string_view> dtypes = {"Float", "Int", "Bool", "Shaped", "Num", "Real",
                                                                "Inexact", "Integer", "UInt", "Complex", "Float32",
                                                                "Float16", "BFloat16", "Int64", "Int32"};
    if (dtypes.count(last)) return annotation_type(split_top(inner, ',')[0], depth + 1);
    if (last == "TensorType") return TypeKind::Tensor;
    return TypeKind::Unknown;  // a container: dict[str, Tensor], List[Tensor], Tuple[Tensor, ...]
  }
  if (last.find("Tensor") != std::string_view::npos) return TypeKind::Tensor;
  if (last.find("Module") != std::string_view::npos) return TypeKind::Module;
  return TypeKind::Unknown;
}

}  // namespace

ProgramModel::Reaching ProgramModel::reaching(const Module& m, NodeId ident) const {
  // the assignment that reaches this read in straight-line code; any other binding on the way (a
  // loop target, a branch, a rebinding later in an enclosing loop) makes it unknown
  const Tree& t = m.tree;
  std::string name(t.text(ident));
  std::unordered_set<std::string> bound;
  NodeId cur = ident;
  for (NodeId p = t.parent(cur); p != kNone; cur = p, p = t.parent(p)) {
    K k = t.kind(p);
    if (k == K::FunctionDefinition || k == K::ClassDefinition || k == K::Lambda) return {};
    if (k == K::ForStatement || k == K::WhileStatement) {
      bound.clear();
      collect_assigned_names(t, p, bound);
      if (bound.count(name)) return {};
    }
    if (k != K::Block && k != K::Module) continue;
    std::vector<NodeId> before;
    for (NodeId s = t.first_child(p); s != kNone && s != cur; s = t.next_sibling(s))
      if (t[s].named) before.push_back(s);
    for (auto bi = before.rbegin(); bi != before.rend(); ++bi) {
      NodeId s = *bi;
      if (t.is(s, K::ExpressionStatement)) {
        NodeId e = t.first_named_child(s);
        if (e != kNone && t.is(e, K::Call))
          if (const Call* c = m.call_at(e); c && c->receiver != kNone && t.is(c->receiver, K::Identifier) &&
                                             t.text(c->receiver) == name && (c->method == "to" || c->method == "cuda"))
            return {kNone, e};
      }
      bound.clear();
      collect_assigned_names(t, s, bound);
      if (!bound.count(name)) continue;
      NodeId a = t.is(s, K::ExpressionStatement) ? t.first_named_child(s) : kNone;
      if (a == kNone || !t.is(a, K::Assignment)) return {};
      NodeId left = t.field(a, F::Left), right = t.field(a, F::Right);
      if (left == kNone || right == kNone) return {};
      if (t.is(left, K::Identifier)) return t.text(left) == name ? Reaching{right, kNone} : Reaching{};
      // x, y = x.to(device), y.to(device)
      if ((t.is(left, K::PatternList) || t.is(left, K::TuplePattern)) &&
          (t.is(right, K::ExpressionList) || t.is(right, K::Tuple))) {
        auto ls = t.named_children(left), rs = t.named_children(right);
        if (ls.size() != rs.size()) return {};
        for (size_t i = 0; i < ls.size(); ++i)
          if (t.is(ls[i], K::Identifier) && t.text(ls[i]) == name) return {rs[i], kNone};
      }
      return {};
    }
    if (k == K::Module) return {};
  }
  return {};
}

bool ProgramModel::on_accelerator(const Module& m, NodeId expr, int depth) const {
  const Tree& t = m.tree;
  if (expr == kNone || depth > 6) return false;
  switch (t.kind(expr)) {
    case K::ParenthesizedExpression: return on_accelerator(m, t.first_named_child(expr), depth + 1);
    case K::Call: {
      const Call* c = m.call_at(expr);
      if (!c) return false;
      if (c->receiver != kNone && c->method == "cuda") return true;
      if (c->receiver != kNone && c->method == "to") {
        NodeId d = positional_arg(m, *c, 0);
        if (d == kNone) d = keyword_arg(m, *c, "device");
        return d != kNone && is_accelerator_device(m, d);
      }
      if (c->receiver != kNone && keeps_placement(c->method)) return on_accelerator(m, c->receiver, depth + 1);
      if (c->qname.rfind("torch.", 0) == 0) {
        NodeId d = keyword_arg(m, *c, "device");
        return d != kNone && is_accelerator_device(m, d);
      }
      // the output of a model that was moved to the accelerator
      if (c->method.empty() && c->callee != kNone && t.is(c->callee, K::Identifier))
        return type_of(m, c->callee) != TypeKind::Tensor && on_accelerator(m, c->callee, depth + 1);
      return false;
    }
    case K::Identifier: {
      Reaching r = reaching(m, expr);
      // `model.to(device)` / `model.cuda()` moves a module in place
      if (r.in_place != kNone) {
        const Call* c = m.call_at(r.in_place);
        return c && type_of(m, c->receiver) == TypeKind::Module && on_accelerator(m, r.in_place, depth + 1);
      }
      return r.value != kNone && on_accelerator(m, r.value, depth + 1);
    }
    default: return false;
  }
}

namespace {

bool is_tensor_function(std::string_view q) {
  if (q.rfind("torch.nn.functional.", 0) == 0) return true;
  if (q.rfind("torch.", 0) != 0) return false;
  std::string_view rest = q.substr(6);
  if (rest.find('.') != std::string_view::npos) return rest.rfind("linalg.", 0) == 0 || rest.rfind("fft.", 0) == 0;
  static const char* names[] = {
      "zeros", "ones", "empty", "full", "rand", "randn", "randint", "randperm", "arange", "linspace", "logspace",
      "eye", "tensor", "as_tensor", "from_numpy", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like",
      "randn_like", "randint_like", "cat", "concat", "stack", "where", "matmul", "mm", "bmm", "einsum", "sum",
      "mean", "exp", "log", "sigmoid", "softmax", "log_softmax", "tanh", "relu", "flatten", "reshape", "clamp",
      "abs", "sqrt", "norm", "argmax", "argmin", "max", "min", "mul", "add", "sub", "div", "pow", "masked_fill",
      "gather", "index_select", "squeeze", "unsqueeze", "transpose", "permute", "chunk", "split", "isnan", "isinf",
      "isfinite", "all", "any", "eq", "ne", "gt", "lt", "ge", "le", "multinomial", "normal", "bernoulli", "cumsum",
      "sort", "topk", "outer", "dot", "cross", "diag", "tril", "triu", "roll", "flip", "clip", "round", "floor",
      "ceil", "sign", "sin", "cos", "logsumexp", "var", "std", "prod", "nonzero", "bincount", "cdist"};
  for (auto* n : names)
    if (rest == n) return true;
  return false;
}

bool is_module_factory(std::string_view q) {
  if (q.rfind("torchvision.models.", 0) == 0) return true;
  if (q == "timm.create_model" || q == "timm.models.create_model") return true;
  if (q == "torch.nn.parallel.DistributedDataParallel" || q == "torch.nn.DataParallel" ||
      q == "torch.nn.parallel.DataParallel")
    return true;
  if (q.rfind("torch.nn.", 0) == 0) {
    std::string_view rest = q.substr(9);
    if (rest.rfind("functional", 0) == 0 || rest.rfind("init", 0) == 0 || rest.rfind("utils", 0) == 0) return false;
    std::string_view last = last_component(q);
    return !last.empty() && std::isupper(static_cast<unsigned char>(last[0])) && last != "Parameter";
  }
  return q == "torch.compile";
}

// Methods of a tensor whose result is not a tensor.
bool tensor_method_not_tensor(std::string_view m) {
  static const char* names[] = {"item", "tolist", "numpy", "size", "dim", "numel", "backward", "data_ptr",
                                "element_size", "is_contiguous", "stride", "storage", "get_device", "nelement",
                                "register_hook", "__len__", "type"};
  for (auto* n : names)
    if (m == n) return true;
  return false;
}

bool module_method_keeps_module(std::string_view m) {
  static const char* names[] = {"to", "cuda", "cpu", "half", "float", "double", "bfloat16", "train", "eval",
                                "requires_grad_", "to_empty", "xpu", "share_memory"};
  for (auto* n : names)
    if (m == n) return true;
  return false;
}

thread_local std::vector<std::pair<const void*, std::string_view>> g_type_stack;
thread_local bool g_cycle_hit = false;

}  // namespace

// Does iterating `e` yield (index, item) pairs: `enumerate(...)`, possibly inside tqdm / iter
// wrappers or through a name bound to one (`it = tqdm(enumerate(loader))`)?
bool ProgramModel::enumerates(const Module& m, NodeId e, int depth) const {
  const Tree& t = m.tree;
  if (e == kNone || depth > 4) return false;
  if (t.is(e, K::Call)) {
    const Call* c = m.call_at(e);
    if (!c) return false;
    if (c->qname == "builtins.enumerate") return true;
    if (c->qname == "builtins.iter" || c->qname.rfind("tqdm", 0) == 0 || c->qname.rfind("rich.progress.track", 0) == 0)
      return enumerates(m, positional_arg(m, *c, 0), depth + 1);
    return false;
  }
  if (t.is(e, K::Identifier)) {
    auto* bs = bindings_of(m, e);
    if (!bs || bs->empty()) return false;
    for (auto& b : *bs)
      if (!(b.kind == Binding::Kind::Assign && b.whole && enumerates(m, b.value, depth + 1))) return false;
    return true;
  }
  return false;
}

// `for i, batch in zip(range(n), loader)`: is `name` the element a counter (`range`, tqdm's
// `trange`, `itertools.count`) gives, an int and not a batch?
static bool zipped_counter(const Module& m, NodeId left, NodeId right, std::string_view name) {
  const Tree& t = m.tree;
  if (right == kNone || !t.is(right, K::Call)) return false;
  const Call* z = m.call_at(right);
  if (!z || z->qname != "builtins.zip") return false;
  NodeId args = t.field(right, F::Arguments);
  if (args == kNone) return false;
  auto targets = t.named_children(left);
  auto xs = t.named_children(args);
  if (targets.size() != xs.size()) return false;
  for (size_t i = 0; i < targets.size(); ++i) {
    if (!t.is(targets[i], K::Identifier) || t.text(targets[i]) != name) continue;
    if (!t.is(xs[i], K::Call)) return false;
    const Call* c = m.call_at(xs[i]);
    if (!c) return false;
    std::string_view q = c->qname;
    return q == "builtins.range" || q == "itertools.count" || q.ends_with(".trange");  // tqdm.trange, tqdm.auto.trange
  }
  return false;
}

// Does this data loop bind `name` to a whole batch, the loader's element as it comes (`for batch in
// loader`, `for i, batch in enumerate(loader)`, `for a, b in zip(loader_a, loader_b)`), rather than
// to a part of an unpacked one (`for x, y in loader`, `for i, (x, y) in enumerate(loader)`)? A whole
// batch is whatever the collate function builds: a tensor, a list, a dict, a tokenizer's
// `BatchEncoding` (whose `.to()` works in place); its parts are tensors.
bool ProgramModel::whole_batch_target(const Module& m, NodeId for_stmt, std::string_view name) const {
  const Tree& t = m.tree;
  NodeId left = t.field(for_stmt, F::Left), right = t.field(for_stmt, F::Right);
  if (left == kNone) return false;
  if (t.is(left, K::Identifier)) return t.text(left) == name;
  if (!t.is(left, K::PatternList) && !t.is(left, K::TuplePattern)) return false;
  auto targets = t.named_children(left);
  if (enumerates(m, right))
    return targets.size() == 2 && t.is(targets[1], K::Identifier) && t.text(targets[1]) == name;
  if (right != kNone && t.is(right, K::Call))
    if (const Call* z = m.call_at(right); z && z->qname == "builtins.zip") {
      NodeId args = t.field(right, F::Arguments);
      if (args == kNone || t.named_children(args).size() != targets.size()) return false;
      for (NodeId el : targets)
        if (t.is(el, K::Identifier) && t.text(el) == name) return !zipped_counter(m, left, right, name);
    }
  return false;
}

TypeKind ProgramModel::param_type_from_callers(const Module& m, const Function* f, std::string_view param,
                                               int depth) const {
  (void)m;
  if (!f || depth > 6) return TypeKind::Unknown;
  size_t idx = 0;
  bool found = false;
  for (; idx < f->params.size(); ++idx)
    if (f->params[idx] == param) {
      found = true;
      break;
    }
  if (!found) return TypeKind::Unknown;
  const auto& callers = callers_of(f);
  if (callers.empty() || callers.size() > 16) return TypeKind::Unknown;
  TypeKind k = TypeKind::Unknown;
  bool first = true;
  for (const Call* c : callers) {
    const Module& cm = *c->mod;
    NodeId arg = keyword_arg(cm, *c, param);
    if (arg == kNone) {
      size_t offset = implicit_args(*c, *f);
      if (idx < offset) return TypeKind::Unknown;
      if (has_splat(cm, *c)) return TypeKind::Unknown;
      arg = positional_arg(cm, *c, idx - offset);
    }
    if (arg == kNone) return TypeKind::Unknown;
    TypeKind ak = type_of(cm, arg, depth + 2);
    if (first) k = ak;
    else if (ak != k) return TypeKind::Unknown;
    first = false;
  }
  return k;
}

TypeKind ProgramModel::type_of(const Module& m, NodeId expr, int depth) const {
  const Tree& t = m.tree;
  if (expr == kNone || depth > 12) return TypeKind::Unknown;
  switch (t.kind(expr)) {
    case K::Integer: case K::Float: return TypeKind::Number;
    case K::ParenthesizedExpression: return type_of(m, t.first_named_child(expr), depth + 1);
    case K::UnaryOperator: {
      NodeId a = t.field(expr, F::Argument);
      return type_of(m, a != kNone ? a : t.first_named_child(expr), depth + 1);
    }
    case K::BinaryOperator: {
      TypeKind l = type_of(m, t.field(expr, F::Left), depth + 1), r = type_of(m, t.field(expr, F::Right), depth + 1);
      if (l == TypeKind::Tensor || r == TypeKind::Tensor) return TypeKind::Tensor;
      if (l == TypeKind::Number && r == TypeKind::Number) return TypeKind::Number;
      return TypeKind::Unknown;
    }
    case K::ComparisonOperator: {
      // `x is None`, `a is not b`: identity is a Python bool whatever the operands
      bool identity_only = true;
      for (NodeId c = t.first_child(expr); c != kNone; c = t.next_sibling(c))
        if (!t[c].named && t.text(c).substr(0, 2) != "is") identity_only = false;
      if (identity_only) return TypeKind::Unknown;
      // `key in d`, `name not in seen`: membership asks the container. It converts a tensor only
      // when the container is one; a string is never an element of a tensor.
      bool membership_only = true;
      for (NodeId c = t.first_child(expr); c != kNone; c = t.next_sibling(c))
        if (!t[c].named && t.text(c) != "in" && t.text(c) != "not in" && t.text(c) != "not") membership_only = false;
      if (membership_only) {
        NodeId left = t.first_named_child(expr), right = kNone;
        for (NodeId c : t.named_child_range(expr)) right = c;
        if (left == kNone || right == kNone || left == right) return TypeKind::Unknown;
        if (t.is(left, K::String) || t.is(left, K::ConcatenatedString)) return TypeKind::Unknown;
        return type_of(m, right, depth + 1) == TypeKind::Tensor ? TypeKind::Tensor : TypeKind::Unknown;
      }
      for (NodeId c : t.named_child_range(expr))
        if (type_of(m, c, depth + 1) == TypeKind::Tensor) return TypeKind::Tensor;
      return TypeKind::Unknown;
    }
    case K::Subscript: {
      NodeId v = t.field(expr, F::Value);
      TypeKind vt = type_of(m, v, depth + 1);
      if (vt == TypeKind::Tensor) return TypeKind::Tensor;
      // batch["image"] / batch[0] of a whole batch from a DataLoader
      if (v != kNone && t.is(v, K::Identifier)) {
        for (const Scope* s = scope_at(m, v); s; s = s->parent)
          if (auto* bs = s->find_local(t.text(v))) {
            for (auto& b : *bs)
              if (b.kind == Binding::Kind::ForTarget && b.stmt != kNone) {
                const Loop* L = loop_of(m, b.stmt);
                if (L && L->data_loop && whole_batch_target(m, b.stmt, t.text(v))) return TypeKind::Tensor;
              }
            break;
          }
      }
      return TypeKind::Unknown;
    }
    case K::Call: {
      const Call* c = m.call_at(expr);
      if (!c) return TypeKind::Unknown;
      std::string_view q = c->qname;
      if (!q.empty()) {
        if (q == "torch.device") return TypeKind::Device;
        if (q == "torch.utils.data.DataLoader" || q == "torch.utils.data.dataloader.DataLoader") return TypeKind::DataLoader;
        if (q.rfind("torch.optim.", 0) == 0 && q.find("lr_scheduler") == std::string_view::npos) {
          std::string_view last = last_component(q);
          if (!last.empty() && std::isupper(static_cast<unsigned char>(last[0]))) return TypeKind::Optimizer;
        }
        if (is_tensor_function(q)) return TypeKind::Tensor;
        if (is_module_factory(q)) return TypeKind::Module;
        if (q == "builtins.len" || q == "builtins.int" || q == "builtins.float" || q == "builtins.round")
          return TypeKind::Number;
        if (q.rfind("numpy.", 0) == 0) return TypeKind::NumpyArray;
      }
      if (c->target_class) return is_nn_module_class(*c->target_class) ? TypeKind::Module : TypeKind::Unknown;
      if (!c->method.empty() && c->receiver != kNone) {
        TypeKind r = type_of(m, c->receiver, depth + 1);
        if (r == TypeKind::Tensor) {
          if (c->method == "item") return TypeKind::Number;
          if (c->method == "numpy") return TypeKind::NumpyArray;
          return tensor_method_not_tensor(c->method) ? TypeKind::Unknown : TypeKind::Tensor;
        }
        if (r == TypeKind::Module) return module_method_keeps_module(c->method) ? TypeKind::Module : TypeKind::Unknown;
        return TypeKind::Unknown;
      }
      // calling a module instance runs forward: its output
      if (c->callee != kNone && (t.is(c->callee, K::Identifier) || t.is(c->callee, K::Attribute)) && c->method.empty()) {
        if (type_of(m, c->callee, depth + 1) == TypeKind::Module) return TypeKind::Tensor;
      }
      if (c->callee != kNone && t.is(c->callee, K::Attribute) && c->receiver != kNone && !c->target) {
        // self.model(x) where self.model is a module
      }
      return TypeKind::Unknown;
    }
    case K::Attribute: {
      NodeId obj = t.field(expr, F::Object), attr = t.field(expr, F::Attribute);
      if (obj == kNone || attr == kNone) return TypeKind::Unknown;
      std::string_view a = t.text(attr);
      if (t.is(obj, K::Identifier) && t.text(obj) == "self") {
        const Function* f = m.enclosing_function(expr);
        while (f && !f->cls) f = f->outer;
        if (!f || !f->cls) return TypeKind::Unknown;
        auto it = f->cls->attr_values.find(a);
        if (it == f->cls->attr_values.end()) return TypeKind::Unknown;
        TypeKind k = TypeKind::Unknown;
        bool first = true;
        for (NodeId v : it->second) {
          TypeKind vk = type_of(m, v, depth + 1);
          if (first) k = vk;
          else if (vk != k) return TypeKind::Unknown;
          first = false;
        }
        return k;
      }
      TypeKind o = type_of(m, obj, depth + 1);
      if (o == TypeKind::Tensor && (a == "data" || a == "grad" || a == "T" || a == "mT" || a == "real" || a == "imag"))
        return TypeKind::Tensor;
      if (o == TypeKind::Module && a == "module") return TypeKind::Module;
      return TypeKind::Unknown;
    }
    case K::Identifier: {
      std::string_view name = t.text(expr);
      const Scope* owner = nullptr;
      const Bindings* bs = nullptr;
      for (const Scope* s = scope_at(m, expr); s && !bs; s = s->parent) {
        const Scope* look = s->globals.count(name) ? &m.scope : s;
        bs = look->find_local(name);
        owner = look;
      }
      if (!bs) return TypeKind::Unknown;
      for (auto& e : g_type_stack)
        if (e.first == owner && e.second == name) {
          g_cycle_hit = true;  // a cycle: x = x.to(...); the caller ignores this binding
          return TypeKind::Unknown;
        }
      g_type_stack.emplace_back(owner, name);
      TypeKind k = TypeKind::Unknown;
      bool first = true, mixed = false;
      for (auto& b : *bs) {
        TypeKind bk = TypeKind::Unknown;
        bool self_ref = false;
        bool saved_cycle = g_cycle_hit;
        g_cycle_hit = false;
        switch (b.kind) {
          case Binding::Kind::Assign:
            if (b.whole) {
              // x = x.to(device) keeps x's type: skip the self-reference
              if (b.value != kNone && t.is(b.value, K::Call)) {
                NodeId r = t.field(t.field(b.value, F::Function) != kNone ? t.field(b.value, F::Function) : b.value, F::Object);
                if (r != kNone && t.is(r, K::Identifier) && t.text(r) == name) self_ref = true;
              }
              if (!self_ref) bk = type_of(m, b.value, depth + 1);
            } else if (b.value != kNone && (t.is(b.value, K::ExpressionList) || t.is(b.value, K::Tuple))) {
              // a, b = x[0], x[1]: the elements' type when they agree
              bool firstel = true;
              TypeKind ek = TypeKind::Unknown;
              for (NodeId el : t.named_child_range(b.value)) {
                TypeKind k2 = type_of(m, el, depth + 1);
                if (firstel) ek = k2;
                else if (k2 != ek) ek = TypeKind::Unknown;
                firstel = false;
              }
              bk = ek;
            } else if (b.value != kNone && t.is(b.value, K::Identifier)) {
              // x, y = batch  (batch from a DataLoader)
              TypeKind vk = TypeKind::Unknown;
              for (const Scope* s = scope_at(m, b.value); s; s = s->parent)
                if (auto* vbs = s->find_local(t.text(b.value))) {
                  for (auto& vb : *vbs)
                    if (vb.kind == Binding::Kind::ForTarget && vb.stmt != kNone)
                      if (const Loop* L = loop_of(m, vb.stmt); L && L->data_loop) vk = TypeKind::Tensor;
                  break;
                }
              bk = vk;
            }
            break;
          case Binding::Kind::WithTarget: bk = type_of(m, b.value, depth + 1); break;
          case Binding::Kind::ForTarget: {
            const Loop* L = b.stmt != kNone ? loop_of(m, b.stmt) : nullptr;
            NodeId left = t.field(b.stmt, F::Left);
            if (!L || !L->data_loop || left == kNone || t.is(left, K::Identifier)) break;
            // enumerate(loader): the first element is the index
            NodeId right = t.field(b.stmt, F::Right);
            bool enumerated = enumerates(m, right);
            NodeId first_el = t.first_named_child(left);
            if (enumerated && first_el != kNone && t.is(first_el, K::Identifier) && t.text(first_el) == name)
              bk = TypeKind::Number;
            else if (zipped_counter(m, left, right, name))
              bk = TypeKind::Number;
            else if (!whole_batch_target(m, b.stmt, name))
              bk = TypeKind::Tensor;
            break;
          }
          case Binding::Kind::Param: {
            NodeId p = b.stmt;
            NodeId ty = (p != kNone) ? t.field(p, F::Type) : kNone;
            if (ty != kNone) {
              bk = annotation_type(t.text(ty));
              break;
            }
            // no annotation: the argument every analysed caller passes, when they agree
            bk = param_type_from_callers(m, owner ? owner->fn : nullptr, name, depth);
            break;
          }
          default: break;
        }
        bool cyclic = g_cycle_hit && bk == TypeKind::Unknown;
        g_cycle_hit = saved_cycle;
        if (b.kind == Binding::Kind::AugAssign) {
          // x += y keeps x's type, unless y is a tensor: `total = 0.0; total += loss` is a tensor
          if (b.value != kNone && type_of(m, b.value, depth + 1) == TypeKind::Tensor) {
            if (first) k = TypeKind::Tensor;
            else if (k != TypeKind::Tensor) mixed = true;
            first = false;
          }
          continue;
        }
        if (self_ref || cyclic) continue;
        if (first) k = bk;
        else if (bk != k) mixed = true;
        first = false;
      }
      g_type_stack.pop_back();
      return mixed ? TypeKind::Unknown : k;
    }
    default: return TypeKind::Unknown;
  }
}

}  // namespace tl::py
