// The fast path's model builder: tree-sitter-cpp trees -> the C++ program model (model.h).
// Types come only from declarations in the analysed files; whatever is not certain stays Unknown.
#include <algorithm>
#include <cctype>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "analyzer/core/parallel.h"
#include "analyzer/cpp/model.h"
#include "analyzer/cpp/syntax.h"
#include "analyzer/cpp/torch_names.h"

namespace tl::cpp {

using syntax::F;
using syntax::K;
using syntax::NodeId;
using syntax::kNone;
using syntax::Tree;

namespace {

Range make_range(const SourceFile& src, uint32_t b, uint32_t e) {
  Range r;
  r.begin = b;
  r.end = e;
  r.start = src.line_col(b);
  r.stop = src.line_col(e);
  return r;
}

std::string strip_spaces(std::string_view s) {
  std::string out;
  for (char c : s)
    if (!std::isspace(static_cast<unsigned char>(c))) out += c;
  return out;
}

// Identifier tokens of an expression's text (comments and strings are rare in conditions).
std::vector<std::string> identifiers(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = s[i];
    if (std::isalpha(c) || c == '_') {
      size_t j = i;
      while (j < s.size() && (std::isalnum(static_cast<unsigned char>(s[j])) || s[j] == '_')) ++j;
      out.emplace_back(s.substr(i, j - i));
      i = j;
    } else if (c == '"') {
      ++i;
      while (i < s.size() && s[i] != '"') i += s[i] == '\\' ? 2 : 1;
      ++i;
    } else {
      ++i;
    }
  }
  return out;
}

bool icontains(std::string_view s, std::string_view w) {
  auto it = std::search(s.begin(), s.end(), w.begin(), w.end(),
                        [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b)); });
  return it != s.end();
}

// std::ostream and the standard streams derived from it
bool is_std_stream(std::string_view q) {
  for (std::string_view s : {"std::ostream", "std::ostringstream", "std::stringstream", "std::ofstream", "std::fstream",
                             "std::iostream", "std::wostream", "std::wostringstream", "std::wstringstream"})
    if (q == s) return true;
  return false;
}

std::string last_component(std::string_view q) {
  auto p = q.rfind("::");
  return std::string(p == std::string_view::npos ? q : q.substr(p + 2));
}

}  // namespace

std::string_view type_kind_name(TypeKind k) {
  switch (k) {
    case TypeKind::Unknown: return "unknown";
    case TypeKind::Tensor: return "tensor";
    case TypeKind::Module: return "module";
    case TypeKind::ModuleHolder: return "module holder";
    case TypeKind::Optimizer: return "optimizer";
    case TypeKind::DataLoader: return "data loader";
    case TypeKind::Batch: return "batch";
    case TypeKind::Device: return "device";
    case TypeKind::GradGuard: return "grad guard";
    case TypeKind::Other: return "other";
  }
  return "unknown";
}

std::string_view loop_kind_name(LoopKind k) {
  switch (k) {
    case LoopKind::Other: return "other";
    case LoopKind::TrainingStep: return "training step";
    case LoopKind::EvaluationStep: return "evaluation step";
    case LoopKind::Epoch: return "epoch";
  }
  return "other";
}

std::string Model::describe(const Loop& l) {
  switch (l.kind) {
    case LoopKind::TrainingStep: return "training step loop";
    case LoopKind::EvaluationStep: return "evaluation step loop";
    case LoopKind::Epoch: return "epoch loop";
    case LoopKind::Other: break;
  }
  return "loop";
}

struct Builder {
  Model& m;
  std::vector<Tree> trees;

  // per-guard facts for the varying decision, filled while walking
  struct GuardFacts {
    std::vector<std::string> names;
    bool percent = false;
    int32_t function = -1;
  };
  std::vector<GuardFacts> guard_facts;
  // classes by unqualified name; holder name -> class index
  std::unordered_map<std::string, uint32_t> class_by_name, class_by_holder;
  std::unordered_multimap<std::string, uint32_t> fn_by_qname, fn_by_name;
  // declared return types of methods (in-class declarations): "Class::method" -> type text
  std::unordered_map<std::string, std::string> method_return;
  // function definitions: function id -> (tu, definition node)
  std::vector<std::pair<uint32_t, NodeId>> fn_defs;
  // the current class per function (-1 none)
  std::vector<int32_t> fn_class;
  // variables per function for lookup, per class, per TU namespace scope
  std::vector<std::vector<uint32_t>> fn_vars, class_vars, tu_vars;

  explicit Builder(Model& model) : m(model) {}

  // ---------------------------------------------------------------- typed facts
  std::vector<const TypedFile*> typed;  // per TU, null without facts
  // The typed front end's type wins where it knows one and differs; the inference stays where the
  // typed path says nothing (or agrees: the fast path's names are kept).
  static Type merged(const Type& inferred, const Type* exact) {
    if (!exact || exact->kind == TypeKind::Unknown) return inferred;
    if (inferred.kind == exact->kind) return inferred;
    return *exact;
  }
  const Type* typed_decl(uint32_t tu, uint32_t offset) const {
    if (!typed[tu]) return nullptr;
    auto it = typed[tu]->decls.find(offset);
    return it == typed[tu]->decls.end() ? nullptr : &it->second;
  }
  const TypedCall* typed_call(uint32_t tu, uint32_t offset, bool member) const {
    if (!typed[tu]) return nullptr;
    auto& map = member ? typed[tu]->member_calls : typed[tu]->calls;
    auto it = map.find(offset);
    return it == map.end() ? nullptr : &it->second;
  }

  // recursion depths of walk() and infer()
  struct Depth {
    int& d;
    explicit Depth(int& depth) : d(depth) { ++d; }
    ~Depth() { --d; }
  };
  static constexpr int kMaxWalkDepth = 1500, kMaxInferDepth = 200;
  int walk_depth = 0;
  mutable int infer_depth = 0;
  std::map<uint32_t, uint32_t> truncated_tus;  // TU -> byte offset of the first node not followed

  // ---------------------------------------------------------------- names
  // Block-scope `using namespace X;`, `using X::y;` and `namespace a = X;` seen so far in the
  // blocks being walked (innermost last); a block drops its own when it ends.
  struct LocalUsing {
    enum Kind : uint8_t { Directive, Declaration, Alias } kind;
    uint32_t tu;
    std::string name, target;  // Declaration: "data_parallel" -> "torch::nn::parallel::data_parallel"
  };
  std::vector<LocalUsing> local_usings;

  std::string canon(uint32_t tu, std::string name) const {
    name = strip_spaces(name);
    if (name.rfind("::", 0) == 0) name = name.substr(2);
    auto p = name.find("::");
    std::string head = p == std::string::npos ? name : name.substr(0, p);
    std::string rest = p == std::string::npos ? "" : name.substr(p);
    for (auto it = local_usings.rbegin(); it != local_usings.rend(); ++it)
      if (it->tu == tu && it->kind == LocalUsing::Alias && it->name == head) return it->target + rest;
    auto& al = m.tus_[tu].namespace_aliases;
    if (auto it = al.find(head); it != al.end()) name = it->second + rest;
    return name;
  }

  // `using namespace ns;` in force (namespace scope or an enclosing block)?
  bool uses_namespace(uint32_t tu, std::string_view ns) const {
    for (auto& u : local_usings)
      if (u.tu == tu && u.kind == LocalUsing::Directive && u.target == ns) return true;
    auto& us = m.tus_[tu].using_namespaces;
    return std::find(us.begin(), us.end(), ns) != us.end();
  }

  // A name as written -> its qualified name: aliases and using-declarations applied; an
  // unqualified name that no analysed function or class claims is looked up in the `using
  // namespace` namespaces (the blocks' first, innermost first) among the LibTorch names trainlint
  // knows.
  std::string resolve(uint32_t tu, std::string_view written) const {
    std::string n = canon(tu, std::string(written));
    if (n.empty()) return n;
    auto p = n.find("::");
    std::string head = n.substr(0, p);
    std::string rest = p == std::string::npos ? "" : n.substr(p);
    for (auto it = local_usings.rbegin(); it != local_usings.rend(); ++it)
      if (it->tu == tu && it->kind == LocalUsing::Declaration && it->name == head) return it->target + rest;
    if (auto it = m.tus_[tu].using_declarations.find(head); it != m.tus_[tu].using_declarations.end())
      return it->second + rest;
    if (class_by_name.count(head) || class_by_holder.count(head)) return n;
    if (n.find("::") == std::string::npos && fn_by_name.count(n)) return n;
    for (auto it = local_usings.rbegin(); it != local_usings.rend(); ++it) {
      if (it->tu != tu || it->kind != LocalUsing::Directive) continue;
      std::string cand = it->target + "::" + n;
      if (torch_names::known(cand)) return cand;
    }
    for (auto& u : m.tus_[tu].using_namespaces) {
      std::string cand = u + "::" + n;
      if (torch_names::known(cand)) return cand;
    }
    return n;
  }

  // `using namespace X;` / `using X::y;` / `namespace a = X;`: (kind, name, qualified target), or
  // nullopt for anything else (a member using-declaration is read by the caller's context).
  std::optional<LocalUsing> using_of(uint32_t tu, NodeId c) const {
    const Tree& t = trees[tu];
    if (t.is(c, K::NamespaceAliasDefinition)) {
      NodeId name = t.field(c, F::Name);
      NodeId target = kNone;
      t.for_each_child(c, [&](NodeId k) { if (t[k].named && k != name) target = k; });
      if (name == kNone || target == kNone) return std::nullopt;
      return LocalUsing{LocalUsing::Alias, tu, std::string(t.text(name)), canon(tu, std::string(t.text(target)))};
    }
    if (!t.is(c, K::UsingDeclaration)) return std::nullopt;
    bool is_ns = false;
    t.for_each_child(c, [&](NodeId k) { if (t.text(k) == "namespace") is_ns = true; });
    NodeId target = t.first_named_child(c);
    if (target == kNone) return std::nullopt;
    std::string q = canon(tu, std::string(t.text(target)));
    if (is_ns) return LocalUsing{LocalUsing::Directive, tu, "", q};
    if (q.find("::") == std::string::npos) return std::nullopt;
    return LocalUsing{LocalUsing::Declaration, tu, last_component(q), q};
  }

  // ---------------------------------------------------------------- types
  Type type_of_name(uint32_t tu, std::string_view written) const {
    std::string t = strip_spaces(written);
    for (std::string_view q : {"const", "volatile", "struct", "class"})
      if (t.rfind(q, 0) == 0 && t.size() > q.size() && !std::isalnum(static_cast<unsigned char>(t[q.size()])) &&
          t[q.size()] != '_')
        t = t.substr(q.size());
    // std::shared_ptr<X> / std::unique_ptr<X> of a module: a pointer used with ->, like a holder
    for (std::string_view sp : {"std::shared_ptr<", "std::unique_ptr<", "shared_ptr<"}) {
      if (t.rfind(sp, 0) == 0 && t.back() == '>') {
        Type inner = type_of_name(tu, t.substr(sp.size(), t.size() - sp.size() - 1));
        if (inner.kind == TypeKind::Module) return {TypeKind::ModuleHolder, inner.name};
        if (inner.kind == TypeKind::Optimizer) return inner;
        return {};
      }
    }
    if (t.find('<') != std::string::npos) return {};
    std::string q = resolve(tu, t);
    if (is_std_stream(q)) return {TypeKind::Other, q};
    if (q.find("::") == std::string::npos && uses_namespace(tu, "std") && is_std_stream("std::" + q))
      return {TypeKind::Other, "std::" + q};
    if (auto it = class_by_holder.find(q); it != class_by_holder.end())
      return {TypeKind::ModuleHolder, m.classes_[it->second].name};
    if (auto it = class_by_name.find(q); it != class_by_name.end()) {
      const Class& c = m.classes_[it->second];
      return {c.is_module ? TypeKind::Module : TypeKind::Other, c.name};
    }
    TypeKind k = torch_names::type_kind(q);
    if (k == TypeKind::Unknown) return {};
    return {k, q};
  }

  // The type of an expression, from declarations and the LibTorch API's return types.
  Type infer(uint32_t tu, int32_t fn, NodeId e) const {
    const Tree& t = trees[tu];
    if (e == kNone) return {};
    Depth d(infer_depth);
    if (infer_depth > kMaxInferDepth) return {};  // `a + b + c + ...` thousands deep: unknown
    switch (t.kind(e)) {
      case K::ParenthesizedExpression: return infer(tu, fn, t.first_named_child(e));
      case K::Identifier: {
        int32_t v = m.lookup(tu, fn, t.text(e), t[e].start);
        if (v >= 0) return m.variables_[v].type;
        return {};
      }
      case K::PointerExpression: {  // *loader
        Type in = infer(tu, fn, t.field(e, F::Argument));
        if (t.operator_text(e) == "*" && in.kind == TypeKind::DataLoader) return in;
        if (t.operator_text(e) == "*" && in.kind == TypeKind::ModuleHolder) return {TypeKind::Module, in.name};
        return {};
      }
      case K::FieldExpression: {
        NodeId arg = t.field(e, F::Argument);
        std::string field(t.text(t.field(e, F::Field)));
        if (t.is(arg, K::This)) {
          int32_t c = fn >= 0 ? fn_class[fn] : -1;
          if (c >= 0)
            for (uint32_t v : class_vars[c])
              if (m.variables_[v].name == field) return m.variables_[v].type;
          return {};
        }
        Type base = infer(tu, fn, arg);
        if (base.kind == TypeKind::Batch && (field == "data" || field == "target")) return {TypeKind::Tensor, "at::Tensor"};
        if ((base.kind == TypeKind::Module || base.kind == TypeKind::ModuleHolder)) {
          if (auto it = class_by_name.find(base.name); it != class_by_name.end())
            for (uint32_t v : class_vars[it->second])
              if (m.variables_[v].name == field) return m.variables_[v].type;
        }
        return {};
      }
      case K::SubscriptExpression: {
        Type base = infer(tu, fn, t.field(e, F::Argument));
        if (base.kind == TypeKind::Tensor) return base;
        return {};
      }
      case K::BinaryExpression: {
        std::string_view op = t.operator_text(e);
        if (op == "+" || op == "-" || op == "*" || op == "/") {
          Type l = infer(tu, fn, t.field(e, F::Left)), r = infer(tu, fn, t.field(e, F::Right));
          if (l.kind == TypeKind::Tensor) return l;
          if (r.kind == TypeKind::Tensor) return r;
        }
        return {};
      }
      case K::ConditionalExpression: {
        Type a = infer(tu, fn, t.field(e, F::Consequence)), b = infer(tu, fn, t.field(e, F::Alternative));
        if (a.kind == b.kind && a.kind != TypeKind::Unknown) return a;
        if (a.kind == TypeKind::Device || b.kind == TypeKind::Device) return {TypeKind::Device, "torch::DeviceType"};
        return {};
      }
      case K::QualifiedIdentifier: {
        std::string q = resolve(tu, t.text(e));
        if (torch_names::is_device_constant(q)) return {TypeKind::Device, "torch::DeviceType"};
        return {};
      }
      case K::CallExpression: {
        auto it = call_at.find(key(tu, e));
        if (it != call_at.end()) return m.calls_[it->second].result;
        return {};
      }
      default: return {};
    }
  }

  // ---------------------------------------------------------------- phase 1: declarations
  static NodeId declarator_name(const Tree& t, NodeId d) {
    while (d != kNone) {
      switch (t.kind(d)) {
        case K::Identifier: case K::FieldIdentifier: case K::QualifiedIdentifier: case K::OperatorName:
        case K::DestructorName: case K::TypeIdentifier:
          return d;
        case K::FunctionDeclarator: case K::ReferenceDeclarator: case K::PointerDeclarator: case K::InitDeclarator: {
          NodeId inner = t.field(d, F::Declarator);
          if (inner == kNone) inner = t.first_named_child(d);
          d = inner;
          break;
        }
        default: {
          NodeId inner = t.field(d, F::Declarator);
          if (inner == kNone) return kNone;
          d = inner;
        }
      }
    }
    return kNone;
  }
  static NodeId function_declarator(const Tree& t, NodeId d) {
    while (d != kNone && !t.is(d, K::FunctionDeclarator)) {
      NodeId inner = t.field(d, F::Declarator);
      if (inner == kNone) return kNone;
      d = inner;
    }
    return d;
  }

  void collect_decls(uint32_t tu, NodeId n, const std::string& ns, int32_t cls) {
    const Tree& t = trees[tu];
    for (NodeId c = t.first_child(n); c != kNone; c = t.next_sibling(c)) {
      switch (t.kind(c)) {
        case K::NamespaceDefinition: {
          NodeId name = t.field(c, F::Name);
          std::string inner = ns;
          if (name != kNone) inner = (ns.empty() ? "" : ns + "::") + std::string(t.text(name));
          NodeId body = t.field(c, F::Body);
          if (body != kNone) collect_decls(tu, body, inner, -1);
          break;
        }
        case K::LinkageSpecification: case K::DeclarationList: case K::PreprocIfdef: case K::PreprocIf:
        case K::PreprocElse: case K::PreprocElif: case K::TemplateDeclaration:
          collect_decls(tu, c, ns, cls);
          break;
        case K::UsingDeclaration: case K::NamespaceAliasDefinition: {
          if (cls >= 0) break;  // `using Base::Base;` in a class body
          auto u = using_of(tu, c);
          if (!u) break;
          auto& unit = m.tus_[tu];
          if (u->kind == LocalUsing::Directive) unit.using_namespaces.push_back(u->target);
          else if (u->kind == LocalUsing::Alias) unit.namespace_aliases[u->name] = u->target;
          else unit.using_declarations[u->name] = u->target;
          break;
        }
        case K::ClassSpecifier: case K::StructSpecifier: {
          collect_class(tu, c, ns);
          break;
        }
        case K::Declaration: case K::FieldDeclaration: {
          // `struct NetImpl : torch::nn::Module {...};` parses as a declaration whose type is the class
          NodeId ty = t.field(c, F::Type);
          if (t.is(ty, K::ClassSpecifier) || t.is(ty, K::StructSpecifier)) collect_class(tu, ty, ns);
          // a method declared in a class body: remember its return type
          if (cls >= 0) {
            NodeId fd = function_declarator(t, t.field(c, F::Declarator));
            NodeId nm = fd != kNone ? declarator_name(t, fd) : kNone;
            if (nm != kNone && ty != kNone)
              method_return[m.classes_[cls].name + "::" + std::string(t.text(nm))] = std::string(t.text(ty));
          }
          break;
        }
        case K::FunctionDefinition: {
          add_function(tu, c, ns, cls);
          break;
        }
        case K::ExpressionStatement: {
          // TORCH_MODULE(Net);
          NodeId call = t.first_named_child(c);
          if (t.is(call, K::CallExpression) && t.text(t.field(call, F::Function)) == "TORCH_MODULE") {
            NodeId args = t.field(call, F::Arguments);
            NodeId a = args != kNone ? t.first_named_child(args) : kNone;
            if (a != kNone) pending_holders.emplace_back(std::string(t.text(a)));
          }
          break;
        }
        default:
          // TORCH_MODULE(Net) can also parse as a declaration-like ERROR at namespace scope
          if (t.kind(c) != K::Comment) {
            std::string_view s = t.text(c);
            auto p = s.find("TORCH_MODULE(");
            if (p != std::string_view::npos) {
              auto e = s.find(')', p);
              if (e != std::string_view::npos) pending_holders.emplace_back(strip_spaces(s.substr(p + 13, e - p - 13)));
            }
          }
      }
    }
  }
  std::vector<std::string> pending_holders;

  void collect_class(uint32_t tu, NodeId c, const std::string& ns) {
    const Tree& t = trees[tu];
    NodeId name = t.field(c, F::Name);
    NodeId body = t.field(c, F::Body);
    if (name == kNone || body == kNone) return;
    Class k;
    k.name = std::string(t.text(name));
    k.qualified_name = ns.empty() ? k.name : ns + "::" + k.name;
    k.tu = tu;
    k.range = make_range(*m.tus_[tu].src, t[c].start, t[c].end);
    t.for_each_child(c, [&](NodeId b) {
      if (!t.is(b, K::BaseClassClause)) return;
      t.for_each_child(b, [&](NodeId x) {
        if (t.is(x, K::TypeIdentifier) || t.is(x, K::QualifiedIdentifier) || t.is(x, K::TemplateType))
          k.bases.push_back(resolve(tu, t.text(x)));
      });
    });
    uint32_t idx = static_cast<uint32_t>(m.classes_.size());
    m.classes_.push_back(std::move(k));
    m.classes_by_name_[m.classes_[idx].name].push_back(idx);
    class_vars.emplace_back();
    class_by_name.emplace(m.classes_[idx].name, idx);
    class_nodes.emplace_back(tu, body);
    collect_decls(tu, body, ns.empty() ? m.classes_[idx].name : ns + "::" + m.classes_[idx].name, static_cast<int32_t>(idx));
  }
  std::vector<std::pair<uint32_t, NodeId>> class_nodes;

  void add_function(uint32_t tu, NodeId def, const std::string& ns, int32_t cls) {
    const Tree& t = trees[tu];
    NodeId fd = function_declarator(t, t.field(def, F::Declarator));
    NodeId nm = fd != kNone ? declarator_name(t, fd) : kNone;
    if (nm == kNone || t.field(def, F::Body) == kNone) return;
    Function f;
    f.id = static_cast<uint32_t>(m.functions_.size());
    f.tu = tu;
    std::string written = strip_spaces(t.text(nm));
    // `ResNetImpl<Block>::forward` (a member of a class template, defined outside it): the
    // class is ResNetImpl
    if (written.find('<') != std::string::npos && written.find("::") != std::string::npos) {
      std::string plain;
      int depth = 0;
      for (char ch : written) {
        if (ch == '<') ++depth;
        else if (ch == '>') depth = std::max(0, depth - 1);
        else if (depth == 0) plain += ch;
      }
      if (!plain.empty() && plain.find("operator") == std::string::npos) written = plain;
    }
    f.name = last_component(written);
    int32_t owner = cls;
    if (written.find("::") != std::string::npos) {  // void NetImpl::forward(...) out of class
      std::string scope = written.substr(0, written.rfind("::"));
      std::string cname = last_component(scope);
      if (auto it = class_by_name.find(cname); it != class_by_name.end()) owner = static_cast<int32_t>(it->second);
      f.qualified_name = ns.empty() ? written : ns + "::" + written;
    } else {
      f.qualified_name = cls >= 0 ? m.classes_[cls].qualified_name + "::" + f.name
                                  : (ns.empty() ? f.name : ns + "::" + f.name);
    }
    if (owner >= 0) f.cls = m.classes_[owner].name;
    f.is_main = f.name == "main" && owner < 0 && ns.empty();
    f.range = make_range(*m.tus_[tu].src, t[def].start, t[def].end);
    f.name_range = make_range(*m.tus_[tu].src, t[nm].start, t[nm].end);
    NodeId ty = t.field(def, F::Type);
    if (ty != kNone) pending_return.emplace_back(f.id, std::string(t.text(ty)));
    fn_by_qname.emplace(f.qualified_name, f.id);
    fn_by_name.emplace(f.name, f.id);
    if (!f.cls.empty()) fn_by_qname.emplace(f.cls + "::" + f.name, f.id);
    m.functions_.push_back(std::move(f));
    fn_defs.emplace_back(tu, def);
    fn_class.push_back(owner);
    fn_vars.emplace_back();
  }
  std::vector<std::pair<uint32_t, std::string>> pending_return;

  void finish_classes() {
    for (auto& h : pending_holders) {
      std::string impl = h + "Impl";
      if (auto it = class_by_name.find(impl); it != class_by_name.end()) {
        m.classes_[it->second].holder = h;
        class_by_holder.emplace(h, it->second);
      }
    }
    // module-ness through analysed bases, to a fixpoint
    bool changed = true;
    while (changed) {
      changed = false;
      for (auto& c : m.classes_) {
        if (c.is_module) continue;
        for (auto& b : c.bases) {
          std::string base = b.substr(0, b.find('<'));
          bool mod = base == "torch::nn::Module" || base == "nn::Module" || base.starts_with("torch::nn::Cloneable");
          if (auto it = class_by_name.find(last_component(base)); it != class_by_name.end() && m.classes_[it->second].is_module)
            mod = true;
          if (mod) {
            c.is_module = true;
            changed = true;
          }
        }
      }
    }
    // data members
    for (uint32_t ci = 0; ci < class_nodes.size(); ++ci) {
      // plain variables, not a structured binding: lambdas below capture them (clang 14 cannot)
      const uint32_t tu = class_nodes[ci].first;
      const NodeId body = class_nodes[ci].second;
      const Tree& t = trees[tu];
      t.for_each_child(body, [&](NodeId fdcl) {
        if (!t.is(fdcl, K::FieldDeclaration)) return;
        NodeId ty = t.field(fdcl, F::Type);
        if (ty == kNone) return;
        t.for_each_child(fdcl, [&](NodeId d) {
          if (t[d].field != F::Declarator || function_declarator(t, d) != kNone) return;
          NodeId nm = declarator_name(t, d);
          if (nm == kNone) return;
          Variable v;
          v.name = std::string(t.text(nm));
          v.type = merged(type_of_name(tu, t.text(ty)), typed_decl(tu, t[nm].start));
          v.tu = tu;
          v.cls = static_cast<int32_t>(ci);
          v.decl = make_range(*m.tus_[tu].src, t[nm].start, t[nm].end);
          NodeId dv = t.field(fdcl, F::DefaultValue);
          if (dv != kNone) v.init = std::string(t.text(dv));
          v.scope_end = t[body].end;
          uint32_t vi = static_cast<uint32_t>(m.variables_.size());
          m.variables_.push_back(std::move(v));
          m.index_variable(vi);
          var_values.resize(m.variables_.size());
          var_flags.resize(m.variables_.size());
          class_vars[ci].push_back(vi);
          m.classes_[ci].members.push_back(vi);
        });
      });
    }
    for (auto& [fid, text] : pending_return) {
      Function& f = m.functions_[fid];
      f.return_type = merged(type_of_name(f.tu, text), typed_decl(f.tu, f.name_range.begin));
    }
  }

  // ---------------------------------------------------------------- phase 2: bodies
  struct Ctx {
    uint32_t tu = 0;
    int32_t fn = -1;
    int32_t loop = -1;
    std::vector<uint32_t> guards;
    std::vector<int32_t> loops;  // loop stack in this function, outermost first
    Range stmt;
    uint32_t block_end = 0;
  };
  std::unordered_map<uint64_t, uint32_t> call_at;  // (tu, node) -> call id
  static uint64_t key(uint32_t tu, NodeId n) { return (static_cast<uint64_t>(tu) << 32) | n; }

  Range range(uint32_t tu, NodeId n) const { return make_range(*m.tus_[tu].src, trees[tu][n].start, trees[tu][n].end); }

  uint32_t add_variable(const Ctx& cx, std::string name, Type type, NodeId nm, std::string init, bool param = false) {
    Variable v;
    v.name = std::move(name);
    v.type = merged(type, typed_decl(cx.tu, trees[cx.tu][nm].start));
    v.tu = cx.tu;
    v.function = cx.fn;
    v.parameter = param;
    v.init = std::move(init);
    v.decl = range(cx.tu, nm);
    v.scope_end = cx.block_end;
    uint32_t vi = static_cast<uint32_t>(m.variables_.size());
    m.variables_.push_back(std::move(v));
    m.index_variable(vi);
    var_values.resize(m.variables_.size());
    var_flags.resize(m.variables_.size());
    if (cx.fn >= 0) fn_vars[cx.fn].push_back(vi);
    else tu_vars[cx.tu].push_back(vi);
    for (int32_t l : cx.loops) note_changed(l, m.variables_[vi].name);
    return vi;
  }

  // Loop::changed lists each name once (a guard asks "is this name changed in the loop?")
  std::vector<std::unordered_set<std::string>> changed_in;  // per loop
  void note_changed(int32_t l, const std::string& name) {
    if (changed_in.size() <= static_cast<size_t>(l)) changed_in.resize(l + 1);
    if (changed_in[l].insert(name).second) m.loops_[l].changed.push_back(name);
  }

  void mark_changed(const Ctx& cx, NodeId lhs) {
    const Tree& t = trees[cx.tu];
    while (lhs != kNone && (t.is(lhs, K::FieldExpression) || t.is(lhs, K::SubscriptExpression) ||
                            t.is(lhs, K::PointerExpression) || t.is(lhs, K::ParenthesizedExpression))) {
      NodeId inner = t.field(lhs, F::Argument);
      if (t.is(lhs, K::FieldExpression) && t.is(inner, K::This)) {
        inner = t.field(lhs, F::Field);
      }
      if (t.is(lhs, K::ParenthesizedExpression)) inner = t.first_named_child(lhs);
      lhs = inner;
    }
    if (lhs == kNone) return;
    std::string name(t.text(lhs));
    for (int32_t l : cx.loops) note_changed(l, name);
  }

  uint32_t add_guard(Ctx& cx, NodeId cond) {
    const Tree& t = trees[cx.tu];
    Guard g;
    g.condition = range(cx.tu, cond);
    g.loop = cx.loop;
    GuardFacts gf;
    std::string_view s = t.text(cond);
    gf.percent = s.find('%') != std::string_view::npos;
    gf.names = identifiers(s);
    gf.function = cx.fn;
    uint32_t gi = static_cast<uint32_t>(m.guards_.size());
    m.guards_.push_back(std::move(g));
    guard_facts.push_back(std::move(gf));
    return gi;
  }

  void set_stmt(Ctx& cx, NodeId n, uint32_t end) { cx.stmt = make_range(*m.tus_[cx.tu].src, trees[cx.tu][n].start, end); }

  void walk_declaration(Ctx& cx, NodeId d) {
    const Tree& t = trees[cx.tu];
    NodeId ty = t.field(d, F::Type);
    std::string type_text = ty != kNone ? std::string(t.text(ty)) : "";
    bool is_auto = t.is(ty, K::PlaceholderTypeSpecifier) || type_text == "auto";
    Type declared = is_auto ? Type{} : type_of_name(cx.tu, type_text);
    for (NodeId c = t.first_child(d); c != kNone; c = t.next_sibling(c)) {
      if (t[c].field != F::Declarator) continue;
      NodeId value = kNone;
      NodeId inner = c;
      std::vector<NodeId> ctor_args;
      bool ctor = false;
      if (t.is(c, K::InitDeclarator)) {
        value = t.field(c, F::Value);
        inner = t.field(c, F::Declarator);
        if (t.is(value, K::ArgumentList) || t.is(value, K::InitializerList)) {
          ctor = true;
          for (NodeId a : t.named_child_range(value)) ctor_args.push_back(a);
        }
      } else if (t.is(c, K::FunctionDeclarator) && cx.fn >= 0) {
        // `torch::Device device(torch::kCUDA);` inside a body: a construction that parses as a
        // function declaration
        NodeId params = t.field(c, F::Parameters);
        ctor = true;
        if (params != kNone)
          for (NodeId a : t.named_child_range(params)) ctor_args.push_back(a);
        inner = t.field(c, F::Declarator);
      } else if (t.is(c, K::FunctionDeclarator)) {
        continue;
      }
      NodeId nm = declarator_name(t, inner);
      if (nm == kNone) continue;
      // the declared type: the typed path's when it has one (a class template instance, a type
      // behind an alias), else what the written type names
      Type decl_t = is_auto ? declared : merged(declared, typed_decl(cx.tu, t[nm].start));
      if (!t.is(c, K::InitDeclarator) && !t.is(c, K::FunctionDeclarator))
        ctor = decl_t.kind != TypeKind::Unknown;  // `torch::NoGradGuard guard;`
      Type vt = decl_t;
      std::string init;
      bool arith = !is_auto && arithmetic_declaration(cx, type_text);
      if (value != kNone && !ctor) {
        walk(cx, value);
        init = std::string(t.text(value));
        if (is_auto && plain_value(cx.tu, cx.fn, value)) arith = true;  // auto n = x.size(0);
        if (is_auto) vt = infer(cx.tu, cx.fn, value);
        if (is_auto && vt.kind == TypeKind::Unknown && torch_names::is_device_constant(resolve(cx.tu, init)))
          vt = {TypeKind::Device, "torch::DeviceType"};
      } else if (ctor) {
        for (NodeId a : ctor_args) walk(cx, a);
        if (value != kNone) init = std::string(t.text(value));
        else if (t.is(c, K::FunctionDeclarator)) init = std::string(t.text(t.field(c, F::Parameters)));
        if (decl_t.kind == TypeKind::GradGuard && torch_names::last(decl_t.name) == "AutoGradMode" &&
            strip_spaces(init) != "(false)" && strip_spaces(init) != "{false}")
          vt = {TypeKind::Other, decl_t.name};
        if (ty != kNone && decl_t.kind != TypeKind::Unknown) {
          CallSite cs;
          fill_site(cx, cs, c);
          cs.callee = declared.kind != TypeKind::Unknown || decl_t.name.empty() ? resolve(cx.tu, type_text) : decl_t.name;
          cs.construction = true;
          for (NodeId a : ctor_args) {
            cs.args.emplace_back(t.text(a));
            cs.arg_ranges.push_back(range(cx.tu, a));
          }
          cs.result = vt;
          add_call(cx, std::move(cs), kNone);
        }
      }
      uint32_t vi = add_variable(cx, std::string(t.text(nm)), vt, nm, init);
      if (value != kNone && !ctor) var_values[vi].push_back(value);
      if (arith) var_flags[vi] |= kArithmetic;
    }
  }

  void fill_site(const Ctx& cx, Site& s, NodeId n) const {
    s.tu = cx.tu;
    s.function = cx.fn;
    s.loop = cx.loop;
    s.guards = cx.guards;
    s.range = range(cx.tu, n);
    s.statement = cx.stmt;
  }

  uint32_t add_call(const Ctx& cx, CallSite cs, NodeId node) {
    cs.id = static_cast<uint32_t>(m.calls_.size());
    if (node != kNone) call_at.emplace(key(cx.tu, node), cs.id);
    call_nodes.push_back(node);
    if (cx.fn >= 0) m.functions_[cx.fn].calls.push_back(cs.id);
    m.calls_.push_back(std::move(cs));
    return m.calls_.back().id;
  }

  // the stream an `a << b << c` chain writes to, or ""
  std::string stream_of(const Ctx& cx, NodeId leftmost) const {
    const Tree& t = trees[cx.tu];
    std::string s = strip_spaces(t.text(leftmost));
    if (s == "std::cout" || s == "std::cerr" || s == "std::clog") return s;
    if (uses_namespace(cx.tu, "std") && (s == "cout" || s == "cerr" || s == "clog")) return "std::" + s;
    if (t.is(leftmost, K::Identifier)) {
      int32_t v = m.lookup(cx.tu, cx.fn, s, t[leftmost].start);
      if (v >= 0 && m.variables_[v].type.kind == TypeKind::Other && icontains(m.variables_[v].type.name, "stream")) return s;
    }
    return "";
  }

  void walk_call(Ctx& cx, NodeId n) {
    const Tree& t = trees[cx.tu];
    NodeId fnode = t.field(n, F::Function);
    NodeId args = t.field(n, F::Arguments);
    CallSite cs;
    fill_site(cx, cs, n);
    if (args != kNone)
      for (NodeId a : t.named_child_range(args)) {
        cs.args.emplace_back(t.text(a));
        cs.arg_ranges.push_back(range(cx.tu, a));
      }
    NodeId recv = kNone;
    if (t.is(fnode, K::FieldExpression)) {
      recv = t.field(fnode, F::Argument);
      NodeId field = t.field(fnode, F::Field);
      cs.arrow = t.operator_text(fnode) == "->";
      if (field != kNone && t.type_name(field) == "dependent_name") field = t.first_named_child(field);  // x.template item<T>()
      if (t.is(field, K::TemplateMethod)) {
        NodeId nm = t.field(field, F::Name);
        NodeId ta = t.field(field, F::Arguments);
        cs.method = std::string(t.text(nm));
        if (ta != kNone) {
          std::string s(t.text(ta));
          cs.template_args = s.size() >= 2 ? s.substr(1, s.size() - 2) : s;
        }
      } else {
        cs.method = std::string(t.text(field));
      }
      cs.receiver = std::string(t.text(recv));
      // the receiver first, so that a chained call's result type is known
      walk(cx, recv);
      cs.receiver_type = infer(cx.tu, cx.fn, recv);
      if (t.is(recv, K::CallExpression))
        if (auto it = call_at.find(key(cx.tu, recv)); it != call_at.end()) cs.receiver_call = static_cast<int32_t>(it->second);
      if (t.is(recv, K::This) && cx.fn >= 0 && fn_class[cx.fn] >= 0) cs.receiver_type = {TypeKind::Other, m.classes_[fn_class[cx.fn]].name};
      const TypedCall* exact = field != kNone ? typed_call(cx.tu, t[field].start, true) : nullptr;
      if (exact) cs.receiver_type = merged(cs.receiver_type, &exact->receiver);
      cs.callee = class_by_name.count(cs.receiver_type.name) ? cs.receiver_type.name + "::" + cs.method : cs.method;
      cs.result = torch_names::method_result(cs.receiver_type, cs.method);
      if ((cs.receiver_type.kind == TypeKind::ModuleHolder || cs.receiver_type.kind == TypeKind::Module) && cs.method == "forward")
        cs.result = forward_result(cs.receiver_type);
      if (exact) cs.result = merged(cs.result, &exact->result);
    } else {
      std::string written;
      if (t.is(fnode, K::TemplateFunction)) {
        written = std::string(t.text(t.field(fnode, F::Name)));
        NodeId ta = t.field(fnode, F::Arguments);
        if (ta != kNone) {
          std::string s(t.text(ta));
          cs.template_args = s.size() >= 2 ? s.substr(1, s.size() - 2) : s;
        }
      } else if (t.is(fnode, K::QualifiedIdentifier)) {
        std::string s(t.text(fnode));
        auto lt = s.find('<');
        if (lt != std::string::npos) {
          auto gt = s.rfind('>');
          cs.template_args = gt != std::string::npos && gt > lt ? s.substr(lt + 1, gt - lt - 1) : "";
          s = s.substr(0, lt);
        }
        written = s;
      } else {
        written = std::string(t.text(fnode));
      }
      int32_t var = t.is(fnode, K::Identifier) ? m.lookup(cx.tu, cx.fn, written, t[fnode].start) : -1;
      if (var < 0 && t.is(fnode, K::Identifier) && cx.fn >= 0 && fn_class[cx.fn] >= 0)
        for (uint32_t v : class_vars[fn_class[cx.fn]])
          if (m.variables_[v].name == written) var = static_cast<int32_t>(v);
      if (var >= 0 && (m.variables_[var].type.kind == TypeKind::ModuleHolder || m.variables_[var].type.kind == TypeKind::Module)) {
        cs.holder_call = true;
        cs.receiver = written;
        cs.receiver_type = m.variables_[var].type;
        cs.method = "";
        cs.callee = class_by_name.count(cs.receiver_type.name) ? cs.receiver_type.name + "::forward" : cs.receiver_type.name;
        cs.result = forward_result(cs.receiver_type);
      } else {
        cs.callee = resolve(cx.tu, written);
        cs.result = torch_names::free_result(cs.callee);
        if (cs.callee.find("::") == std::string::npos)
          if (auto it = class_by_holder.find(cs.callee); it != class_by_holder.end()) {
            cs.construction = true;
            cs.result = {TypeKind::ModuleHolder, m.classes_[it->second].name};
          }
        if (cs.result.kind == TypeKind::Unknown) {
          Type as_type = type_of_name(cx.tu, written);  // a temporary: torch::optim::SGD(...)
          if (as_type.kind != TypeKind::Unknown) {
            cs.construction = true;
            cs.result = as_type;
          }
        }
        if ((cs.callee == "std::make_shared" || cs.callee == "std::make_unique" || cs.callee == "make_shared") &&
            !cs.template_args.empty()) {
          Type inner = type_of_name(cx.tu, cs.template_args);
          cs.callee = resolve(cx.tu, strip_spaces(cs.template_args));
          cs.construction = true;
          cs.result = inner.kind == TypeKind::Module ? Type{TypeKind::ModuleHolder, inner.name} : inner;
        }
        // a user function's declared return type
        if (cs.result.kind == TypeKind::Unknown) {
          auto [b, e] = fn_by_qname.equal_range(cs.callee);
          for (auto it = b; it != e; ++it)
            if (m.functions_[it->second].return_type.kind != TypeKind::Unknown) cs.result = m.functions_[it->second].return_type;
        }
        if (const TypedCall* exact = typed_call(cx.tu, t[fnode].start, false)) cs.result = merged(cs.result, &exact->result);
      }
    }
    NodeId parent = t.parent(n);
    cs.discarded = t.is(parent, K::ExpressionStatement);
    uint32_t id = add_call(cx, std::move(cs), n);
    (void)id;
    if (args != kNone) walk(cx, args);
  }

  Type forward_result(const Type& holder) const {
    if (auto it = method_return.find(holder.name + "::forward"); it != method_return.end()) {
      uint32_t tu = m.classes_[class_by_name.at(holder.name)].tu;
      return type_of_name(tu, it->second);
    }
    auto [b, e] = fn_by_qname.equal_range(holder.name + "::forward");
    for (auto it = b; it != e; ++it) return m.functions_[it->second].return_type;
    if (torch_names::library_module_returns_tensor(holder.name)) return {TypeKind::Tensor, "at::Tensor"};
    return {};
  }

  void walk_loop(Ctx& cx, NodeId n) {
    const Tree& t = trees[cx.tu];
    Loop l;
    l.id = static_cast<uint32_t>(m.loops_.size());
    l.tu = cx.tu;
    l.function = cx.fn;
    l.parent = cx.loop;
    l.range = range(cx.tu, n);
    NodeId body = t.field(n, F::Body);
    uint32_t header_end = body != kNone ? t[body].start : t[n].end;
    if (t.is(n, K::DoStatement)) header_end = t[n].start + 2;
    l.header = make_range(*m.tus_[cx.tu].src, t[n].start, header_end);
    while (l.header.end > l.header.begin && std::isspace(static_cast<unsigned char>(m.tus_[cx.tu].src->text()[l.header.end - 1]))) {
      --l.header.end;
      l.header.stop = m.tus_[cx.tu].src->line_col(l.header.end);
    }
    Ctx outer = cx;
    set_stmt(outer, n, l.header.end);
    int32_t lid = static_cast<int32_t>(l.id);
    m.loops_.push_back(l);
    Ctx in = outer;
    in.loop = lid;
    in.loops.push_back(lid);
    auto loader_text = [&](NodeId e) {
      if (e == kNone) return false;
      Type ty = infer(cx.tu, cx.fn, e);
      if (ty.kind == TypeKind::DataLoader) return true;
      for (auto& id : identifiers(t.text(e)))
        if (icontains(id, "loader")) return true;
      return false;
    };
    if (t.is(n, K::ForRangeLoop)) {
      NodeId right = t.field(n, F::Right);
      if (right != kNone) walk(outer, right);  // evaluated once, before the loop
      bool data = loader_text(right);
      bool library_loader = right != kNone && infer(cx.tu, cx.fn, right).kind == TypeKind::DataLoader;
      m.loops_[lid].data_loop = data;
      NodeId decl = t.field(n, F::Declarator);
      NodeId nm = declarator_name(t, decl);
      if (t.is(decl, K::Identifier) || nm != kNone) {
        if (nm == kNone) nm = decl;
        m.loops_[lid].loop_var = std::string(t.text(nm));
        Type vt = data ? Type{TypeKind::Batch, "torch::data::Example"} : Type{};
        NodeId ty = t.field(n, F::Type);
        if (ty != kNone && !t.is(ty, K::PlaceholderTypeSpecifier) && t.text(ty) != "auto") vt = type_of_name(cx.tu, t.text(ty));
        Ctx vc = in;
        vc.block_end = t[n].end;
        vc.loops.clear();
        uint32_t vi = add_variable(vc, m.loops_[lid].loop_var, vt, nm, "");
        if (library_loader && vt.kind == TypeKind::Batch) var_flags[vi] |= kLibraryBatch;
      }
    } else if (t.is(n, K::ForStatement)) {
      NodeId init = t.field(n, F::Initializer);
      if (init != kNone) {
        Ctx ic = outer;
        ic.block_end = t[n].end;
        if (t.is(init, K::Declaration)) {
          walk_declaration(ic, init);
          NodeId nm = declarator_name(t, t.field(init, F::Declarator));
          if (nm != kNone) m.loops_[lid].loop_var = std::string(t.text(nm));
        } else {
          walk(ic, init);
        }
      }
      NodeId cond = t.field(n, F::Condition);
      NodeId upd = t.field(n, F::Update);
      m.loops_[lid].data_loop = loader_text(init) || loader_text(cond);
      if (cond != kNone) walk(in, cond);
      if (upd != kNone) walk(in, upd);
    } else {  // while / do
      NodeId cond = t.field(n, F::Condition);
      m.loops_[lid].data_loop = loader_text(cond);
      if (cond != kNone) walk(in, cond);
    }
    if (body != kNone) walk(in, body);
  }

  void walk(Ctx& cx, NodeId n) {
    const Tree& t = trees[cx.tu];
    if (n == kNone) return;
    Depth d(walk_depth);
    // generated or broken code nested deeper than any hand-written program: not followed, so that
    // the walk's recursion stays far from the stack's end
    if (walk_depth > kMaxWalkDepth) {
      truncated_tus.emplace(cx.tu, t[n].start);
      return;
    }
    switch (t.kind(n)) {
      case K::Comment: return;
      case K::CompoundStatement: {
        Ctx in = cx;
        in.block_end = t[n].end;
        size_t usings = local_usings.size();
        for (NodeId c = t.first_child(n); c != kNone; c = t.next_sibling(c)) walk(in, c);
        local_usings.erase(local_usings.begin() + static_cast<ptrdiff_t>(usings), local_usings.end());
        return;
      }
      case K::UsingDeclaration: case K::NamespaceAliasDefinition: {
        // block scope (namespace scope is read by collect_decls): in force until the block ends
        if (cx.fn >= 0)
          if (auto u = using_of(cx.tu, n)) local_usings.push_back(std::move(*u));
        return;
      }
      case K::ExpressionStatement: case K::ReturnStatement: {
        Ctx in = cx;
        set_stmt(in, n, t[n].end);
        for (NodeId c = t.first_child(n); c != kNone; c = t.next_sibling(c)) walk(in, c);
        return;
      }
      case K::Declaration: {
        Ctx in = cx;
        set_stmt(in, n, t[n].end);
        walk_declaration(in, n);
        return;
      }
      case K::ForRangeLoop: case K::ForStatement: case K::WhileStatement: case K::DoStatement:
        walk_loop(cx, n);
        return;
      case K::IfStatement: {
        NodeId cond = t.field(n, F::Condition);
        NodeId cons = t.field(n, F::Consequence);
        NodeId alt = t.field(n, F::Alternative);
        Ctx hc = cx;
        set_stmt(hc, n, cons != kNone ? t[cons].start : t[n].end);
        walk(hc, cond);
        Ctx in = cx;
        if (cond != kNone) in.guards.push_back(add_guard(cx, cond));
        walk(in, cons);
        walk(in, alt);
        return;
      }
      case K::ConditionalExpression: {
        NodeId cond = t.field(n, F::Condition);
        walk(cx, cond);
        Ctx in = cx;
        if (cond != kNone) in.guards.push_back(add_guard(cx, cond));
        walk(in, t.field(n, F::Consequence));
        walk(in, t.field(n, F::Alternative));
        return;
      }
      case K::BinaryExpression: {
        std::string_view op = t.operator_text(n);
        NodeId l = t.field(n, F::Left), r = t.field(n, F::Right);
        if (op == "&&" || op == "||") {
          walk(cx, l);
          Ctx in = cx;
          if (l != kNone) in.guards.push_back(add_guard(cx, l));
          walk(in, r);
          return;
        }
        if (op == "<<") {
          std::vector<NodeId> operands;
          NodeId cur = n;
          while (t.is(cur, K::BinaryExpression) && t.operator_text(cur) == "<<") {
            operands.push_back(t.field(cur, F::Right));
            cur = t.field(cur, F::Left);
          }
          std::reverse(operands.begin(), operands.end());
          if (cur == kNone) break;
          walk(cx, cur);
          for (NodeId o : operands) walk(cx, o);
          StreamWrite w;
          w.stream = stream_of(cx, cur);
          for (NodeId o : operands) {
            w.operands.emplace_back(t.text(o));
            w.operand_types.push_back(infer(cx.tu, cx.fn, o));
          }
          // any `operator<<` of a tensor formats it (a logger's `LOG(INFO) << t`, an ostream
          // parameter): only a tensor or a number on the left would be something else
          if (w.stream.empty() && !t.is(cur, K::NumberLiteral) && infer(cx.tu, cx.fn, cur).kind != TypeKind::Tensor &&
              std::any_of(w.operand_types.begin(), w.operand_types.end(),
                          [](const Type& ty) { return ty.kind == TypeKind::Tensor; }))
            w.stream = strip_spaces(t.text(cur));
          if (!w.stream.empty()) {
            fill_site(cx, w, n);
            m.streams_.push_back(std::move(w));
            stream_operands.push_back(std::move(operands));
          }
          return;
        }
        break;
      }
      case K::AssignmentExpression: {
        NodeId l = t.field(n, F::Left), r = t.field(n, F::Right);
        walk(cx, r);
        walk(cx, l);
        mark_changed(cx, l);
        // `x = ...` and `options.device = ...` (a member of a local or global struct): the value is
        // one more the variable may hold (device facts read it)
        NodeId base = l;
        while (t.is(base, K::FieldExpression) && !t.is(t.field(base, F::Argument), K::This)) base = t.field(base, F::Argument);
        if (t.is(base, K::Identifier) && r != kNone) {
          int32_t v = m.lookup(cx.tu, cx.fn, t.text(base), t[base].start);
          if (v >= 0) {
            auto& var = m.variables_[v];
            if (!var.init.empty()) var.init += " ; ";
            var.init += std::string(t.text(r));
            // `x = ...` gives x one more value; `x += ...` and the like work in place
            if (base == l && t.operator_text(n) == "=") var_values[v].push_back(r);
          }
        }
        // `std::tie(a, b) = ...`: a and b get values the analysis does not follow
        if (t.is(l, K::CallExpression)) escape_names(cx.tu, cx.fn, t.field(l, F::Arguments));
        return;
      }
      case K::UpdateExpression: {
        mark_changed(cx, t.field(n, F::Argument));
        break;
      }
      case K::PointerExpression: {
        // `&x`: written through a pointer the analysis does not follow
        NodeId a = t.field(n, F::Argument);
        if (t.operator_text(n) == "&" && t.is(a, K::Identifier)) {
          int32_t v = m.lookup(cx.tu, cx.fn, t.text(a), t[a].start);
          if (v >= 0) var_flags[v] |= kEscapes;
        }
        break;
      }
      case K::CallExpression:
        walk_call(cx, n);
        return;
      case K::FunctionDefinition: case K::ClassSpecifier: case K::StructSpecifier:
        return;  // nested definitions are collected separately
      default: break;
    }
    for (NodeId c = t.first_child(n); c != kNone; c = t.next_sibling(c)) walk(cx, c);
  }

  void walk_function(uint32_t fid) {
    auto [tu, def] = fn_defs[fid];
    const Tree& t = trees[tu];
    Ctx cx;
    cx.tu = tu;
    cx.fn = static_cast<int32_t>(fid);
    NodeId body = t.field(def, F::Body);
    cx.block_end = t[def].end;
    NodeId fd = function_declarator(t, t.field(def, F::Declarator));
    NodeId params = fd != kNone ? t.field(fd, F::Parameters) : kNone;
    if (params != kNone)
      for (NodeId p : t.named_child_range(params)) {
        if (!t.is(p, K::ParameterDeclaration) && !t.is(p, K::OptionalParameterDeclaration)) continue;
        NodeId nm = declarator_name(t, t.field(p, F::Declarator));
        if (nm == kNone) continue;
        NodeId ty = t.field(p, F::Type);
        Type pt = ty != kNone ? type_of_name(tu, t.text(ty)) : Type{};
        uint32_t vi = add_variable(cx, std::string(t.text(nm)), pt, nm, "", true);
        m.functions_[fid].params.push_back(vi);
        NodeId d = t.field(p, F::Declarator);
        bool ref = t.is(d, K::ReferenceDeclarator);
        if (ref && t.text(p).find("const") == std::string_view::npos) var_flags[vi] |= kOutReference;
        if (!ref && !t.is(d, K::PointerDeclarator) && ty != kNone && is_arithmetic_type(t.text(ty))) var_flags[vi] |= kArithmetic;
      }
    // member initialisers `: fc1(register_module(...))`
    t.for_each_child(def, [&](NodeId c) {
      if (t.is(c, K::FieldInitializerList)) walk(cx, c);
    });
    walk(cx, body);
  }

  void walk_namespace_scope(uint32_t tu, NodeId n) {
    const Tree& t = trees[tu];
    for (NodeId c = t.first_child(n); c != kNone; c = t.next_sibling(c)) {
      if (t.is(c, K::Declaration)) {
        Ctx cx;
        cx.tu = tu;
        cx.block_end = t[n].end;
        set_stmt(cx, c, t[c].end);
        walk_declaration(cx, c);
      } else if (t.is(c, K::NamespaceDefinition) || t.is(c, K::LinkageSpecification)) {
        NodeId body = t.field(c, F::Body);
        if (body != kNone) walk_namespace_scope(tu, body);
      } else if (t.is(c, K::DeclarationList) || t.is(c, K::PreprocIfdef) || t.is(c, K::PreprocIf)) {
        walk_namespace_scope(tu, c);
      }
    }
  }

  // Default member initializers (`torch::nn::Sequential layer1{torch::nn::Conv2d(...), ...};`):
  // the constructions in them run when the class is built; they sit at namespace scope.
  void walk_member_initializers() {
    for (const auto& cn : class_nodes) {
      const uint32_t tu = cn.first;  // not a structured binding: captured below (clang 14 cannot)
      const NodeId body = cn.second;
      const Tree& t = trees[tu];
      t.for_each_child(body, [&](NodeId fdcl) {
        if (!t.is(fdcl, K::FieldDeclaration)) return;
        NodeId dv = t.field(fdcl, F::DefaultValue);
        if (dv == kNone) return;
        Ctx cx;
        cx.tu = tu;
        cx.block_end = t[body].end;
        set_stmt(cx, fdcl, t[fdcl].end);
        walk(cx, dv);
      });
    }
  }

  // ---------------------------------------------------------------- phase 3: links and facts
  void resolve_targets() {
    for (auto& c : m.calls_) {
      int32_t target = -1;
      auto pick = [&](auto range) {
        int32_t best = -1;
        for (auto it = range.first; it != range.second; ++it) {
          int32_t f = static_cast<int32_t>(it->second);
          if (best < 0 || (m.functions_[f].tu == c.tu && m.functions_[best].tu != c.tu)) best = f;
        }
        return best;
      };
      if (c.holder_call || (!c.method.empty() && class_by_name.count(c.receiver_type.name))) {
        std::string method = c.holder_call ? "forward" : c.method;
        target = pick(fn_by_qname.equal_range(c.receiver_type.name + "::" + method));
      } else if (c.method.empty() && !c.construction) {
        target = pick(fn_by_qname.equal_range(c.callee));
        // an unqualified call inside a method: another method of the same class first
        if (c.callee.find("::") == std::string::npos && c.function >= 0 && fn_class[c.function] >= 0) {
          int32_t own = pick(fn_by_qname.equal_range(m.classes_[fn_class[c.function]].name + "::" + c.callee));
          if (own >= 0) target = own;
        }
        if (target < 0 && c.callee.find("::") == std::string::npos) {
          auto r = fn_by_name.equal_range(c.callee);
          int32_t best = -1;
          for (auto it = r.first; it != r.second; ++it)
            if (m.functions_[it->second].cls.empty()) {
              int32_t f = static_cast<int32_t>(it->second);
              if (best < 0 || (m.functions_[f].tu == c.tu && m.functions_[best].tu != c.tu)) best = f;
            }
          target = best;
        }
      }
      c.target = target;
      if (target >= 0) m.functions_[target].callers.push_back(c.id);
    }
  }

  static bool names_cuda(std::string_view text) {
    return text.find("kCUDA") != std::string_view::npos || text.find("DeviceType::CUDA") != std::string_view::npos ||
           text.find("\"cuda") != std::string_view::npos;
  }
  // functions returning a torch::Device that may be CUDA
  std::vector<char> fn_may_cuda;

  // What mentions_cuda() reads of an expression, worked out once for the fixpoint below: whether
  // its text names CUDA itself, and the variables and analysed functions its identifiers stand
  // for (neither depends on the facts the fixpoint sets). Each round then reads only their flags,
  // where it tokenised every expression and looked every name up again.
  struct CudaRefs {
    bool literal = false;
    std::vector<uint32_t> vars, fns;
  };
  CudaRefs cuda_refs(uint32_t tu, int32_t fn, std::string_view text, uint32_t offset) const {
    CudaRefs r;
    if ((r.literal = names_cuda(text))) return r;
    for (auto& id : identifiers(text)) {
      int32_t v = m.lookup(tu, fn, id, offset);
      if (v >= 0) {
        r.vars.push_back(static_cast<uint32_t>(v));
      } else {
        auto [b, e] = fn_by_name.equal_range(id);
        for (auto it = b; it != e; ++it) r.fns.push_back(it->second);
      }
    }
    return r;
  }
  bool holds_cuda(const CudaRefs& r) const {
    if (r.literal) return true;
    for (uint32_t v : r.vars)
      if (m.variables_[v].may_cuda) return true;
    for (uint32_t f : r.fns)  // `Set_Device(vm)`: an analysed function that may return one
      if (f < fn_may_cuda.size() && fn_may_cuda[f]) return true;
    return false;
  }
  // Whether the expression `text` (at `offset` in function `fn`, -1 outside one) may be a CUDA
  // device: it names CUDA, or one of its names is a variable that may hold one or a function that
  // may return one (as far as device_facts() has found).
  bool mentions_cuda(uint32_t tu, int32_t fn, std::string_view text, uint32_t offset) const {
    return holds_cuda(cuda_refs(tu, fn, text, offset));
  }

  void device_facts() {
    // variables whose value may be a CUDA device, then parameters bound to such values, and
    // functions returning a device built from such values, to a fixpoint
    fn_may_cuda.assign(m.functions_.size(), 0);
    // a function returning a device: its text naming CUDA (no names followed) or a local that may be
    std::vector<char> fn_names_cuda(m.functions_.size(), 0);
    for (auto& f : m.functions_)
      if (f.return_type.kind == TypeKind::Device)
        fn_names_cuda[f.id] = names_cuda(m.tus_[f.tu].src->slice(f.range.begin, f.range.end));
    std::vector<CudaRefs> var_refs(m.variables_.size());
    for (size_t i = 0; i < m.variables_.size(); ++i) {
      auto& v = m.variables_[i];
      if (!v.may_cuda && !v.init.empty()) var_refs[i] = cuda_refs(v.tu, v.function, v.init, v.decl.end);
    }
    struct ArgRefs {
      uint32_t param;  // the variable the argument binds
      CudaRefs refs;
    };
    std::vector<ArgRefs> arg_refs;  // every call's arguments bound to its target's parameters, in order
    for (auto& c : m.calls_) {
      if (c.target < 0) continue;
      auto& f = m.functions_[c.target];
      for (size_t i = 0; i < c.args.size() && i < f.params.size(); ++i)
        arg_refs.push_back({f.params[i], cuda_refs(c.tu, c.function, c.args[i], c.range.begin)});
    }
    for (int round = 0; round < 4; ++round) {
      bool changed = false;
      for (auto& f : m.functions_) {
        if (fn_may_cuda[f.id] || f.return_type.kind != TypeKind::Device) continue;
        bool cuda = fn_names_cuda[f.id];
        for (uint32_t v : m.locals(static_cast<int32_t>(f.id))) cuda = cuda || m.variables_[v].may_cuda;
        if (cuda) {
          fn_may_cuda[f.id] = 1;
          changed = true;
        }
      }
      for (size_t i = 0; i < m.variables_.size(); ++i) {
        auto& v = m.variables_[i];
        if (v.may_cuda || v.init.empty()) continue;
        if (holds_cuda(var_refs[i])) {
          v.may_cuda = true;
          changed = true;
        }
      }
      for (auto& a : arg_refs) {
        auto& p = m.variables_[a.param];
        if (!p.may_cuda && holds_cuda(a.refs)) {
          p.may_cuda = true;
          changed = true;
        }
      }
      if (!changed) break;
    }
    for (auto& c : m.calls_) {
      if (c.method == "cuda" && c.args.empty()) c.places_on_cuda = true;
      else if (c.method == "to" && !c.args.empty() && mentions_cuda(c.tu, c.function, c.args[0], c.range.begin))
        c.places_on_cuda = true;
      else if (c.method.empty() && torch_names::is_tensor_factory(c.callee))
        for (auto& a : c.args)
          if (mentions_cuda(c.tu, c.function, a, c.range.begin)) c.places_on_cuda = true;
    }
  }

  // ---------------------------------------------------------------- host-resident tensors
  // docs/concepts.md "host-resident tensor": a tensor certainly in host memory, because every
  // value it can hold comes from the host (a LibTorch data loader's batch, `.cpu()`,
  // `torch::from_blob`, a factory given no device) through operations that keep a tensor where it
  // is. Parameters are followed to every call of their function in the run, and an analysed
  // function's result to its `return`s. Whatever is not certain is not host-resident.
  std::vector<NodeId> call_nodes;                   // per call id: its call expression (kNone: a declaration)
  std::vector<std::vector<NodeId>> stream_operands; // per stream write: its operands
  std::vector<std::vector<NodeId>> var_values;      // per variable: its initializer and `x = ...` values
  enum : uint8_t { kArithmetic = 1, kEscapes = 2, kOutReference = 4, kLibraryBatch = 8 };
  std::vector<uint8_t> var_flags;                   // per variable
  std::vector<uint8_t> var_host, fn_host;           // memo: 0 unknown, 1 being decided, 2 host, 3 not
  bool loader_batches_on_host = true;               // no dataset or transform of the run places on CUDA
  static constexpr int kMaxHostDepth = 48;
  int host_depth = 0;

  static bool is_arithmetic_type(std::string_view written) {
    std::string w = strip_spaces(written);
    if (w.rfind("const", 0) == 0) w = w.substr(5);
    if (w.rfind("std::", 0) == 0) w = w.substr(5);
    static const std::set<std::string, std::less<>> kArith = {
        "int", "long", "longlong", "short", "unsigned", "unsignedint", "unsignedlong", "size_t", "ssize_t",
        "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "float", "double",
        "bool", "char", "ptrdiff_t"};
    return kArith.count(w) > 0;
  }

  // `int64_t`, or `decltype(n)` of such a variable or of `x.size(0)`
  bool arithmetic_declaration(const Ctx& cx, std::string_view written) const {
    std::string w = strip_spaces(written);
    if (w.rfind("decltype(", 0) == 0 && w.back() == ')') {
      std::string inner = w.substr(9, w.size() - 10);
      for (std::string_view k : {".size(", ".numel(", ".dim(", ".item<"})
        if (inner.find(k) != std::string::npos) return true;
      int32_t v = m.lookup(cx.tu, cx.fn, inner, cx.stmt.begin);
      return v >= 0 && (var_flags[v] & kArithmetic);
    }
    return is_arithmetic_type(w);
  }

  // Every bare name among a call's arguments escapes: `std::tie(a, b)`, `std::swap(a, b)`.
  void escape_names(uint32_t tu, int32_t fn, NodeId args) {
    if (args == kNone) return;
    for (NodeId a : trees[tu].named_child_range(args)) escape_names_in(tu, fn, a);
  }

  void escape_names_in(uint32_t tu, int32_t fn, NodeId e) {
    if (e != kNone && trees[tu].is(e, K::Identifier))
      if (int32_t v = m.lookup(tu, fn, trees[tu].text(e), trees[tu][e].start); v >= 0) var_flags[v] |= kEscapes;
  }

  // The i-th argument node of a call (kNone when it has none there).
  NodeId arg_node(uint32_t call, size_t i) const {
    NodeId n = call_nodes[call];
    if (n == kNone) return kNone;
    const Tree& t = trees[m.calls_[call].tu];
    NodeId args = t.field(n, F::Arguments);
    if (args == kNone) return kNone;
    size_t k = 0;
    for (NodeId a : t.named_child_range(args))
      if (k++ == i) return a;
    return kNone;
  }

  // Not a tensor at all: a literal, an arithmetic variable, a host value read from a tensor
  // (`x.size(0)`).
  bool plain_value(uint32_t tu, int32_t fn, NodeId e) const {
    const Tree& t = trees[tu];
    if (t.is(e, K::ParenthesizedExpression)) return plain_value(tu, fn, t.first_named_child(e));
    if (t.is(e, K::NumberLiteral) || t.is(e, K::True) || t.is(e, K::False)) return true;
    if (t.is(e, K::Identifier)) {
      int32_t v = m.lookup(tu, fn, t.text(e), t[e].start);
      return v >= 0 && (var_flags[v] & kArithmetic);
    }
    if (t.is(e, K::CallExpression))
      if (auto it = call_at.find(key(tu, e)); it != call_at.end()) {
        const CallSite& c = m.calls_[it->second];
        if (c.method == "item" && !c.template_args.empty() && is_arithmetic_type(c.template_args)) return true;
        if ((c.method == "size" || c.method == "numel" || c.method == "dim") && c.args.size() <= 1) return true;
        return !c.method.empty() && c.receiver_type.kind == TypeKind::Tensor && c.result.kind == TypeKind::Other;
      }
    return false;
  }

  // Could this argument of a tensor factory name a device? (`torch::kCUDA`, a device, options
  // built somewhere): anything but sizes, numbers and dtypes could.
  bool may_carry_device(uint32_t tu, int32_t fn, NodeId e) {
    const Tree& t = trees[tu];
    // `x.options()` (and `.dtype(...)` on it) of a host-resident tensor: the host
    for (NodeId o = e; t.is(o, K::CallExpression);) {
      auto it = call_at.find(key(tu, o));
      if (it == call_at.end()) break;
      const CallSite& c = m.calls_[it->second];
      NodeId recv = t.field(t.field(o, F::Function), F::Argument);
      if (c.method == "options") return !host_expr(tu, fn, recv);
      if (c.method != "dtype" && c.method != "requires_grad" && c.method != "layout") break;
      o = recv;
    }
    std::string_view text = t.text(e);
    for (std::string_view w : {"device", "cuda", "opt", "gpu"})
      if (icontains(text, w)) return true;
    for (auto& id : identifiers(text)) {
      int32_t v = m.lookup(tu, fn, id, t[e].start);
      if (v < 0) continue;
      const Variable& var = m.variables_[v];
      if (var.may_cuda || var.type.kind == TypeKind::Device || !(var_flags[v] & kArithmetic)) return true;
    }
    return false;
  }

  bool host_expr(uint32_t tu, int32_t fn, NodeId e) {
    const Tree& t = trees[tu];
    if (e == kNone) return false;
    Depth d(host_depth);
    if (host_depth > kMaxHostDepth) return false;
    switch (t.kind(e)) {
      case K::ParenthesizedExpression: return host_expr(tu, fn, t.first_named_child(e));
      case K::SubscriptExpression: return host_expr(tu, fn, t.field(e, F::Argument));
      case K::UnaryExpression: return host_expr(tu, fn, t.field(e, F::Argument));
      case K::Identifier: {
        int32_t v = m.lookup(tu, fn, t.text(e), t[e].start);
        return v >= 0 && host_var(static_cast<uint32_t>(v));
      }
      case K::FieldExpression: {
        // `batch.target.lengths`: any field of a LibTorch loader's batch
        NodeId root = e;
        while (t.is(root, K::FieldExpression) && t.operator_text(root) == ".") root = t.field(root, F::Argument);
        if (!t.is(root, K::Identifier)) return false;
        int32_t v = m.lookup(tu, fn, t.text(root), t[root].start);
        return v >= 0 && (var_flags[v] & kLibraryBatch) && loader_batches_on_host;
      }
      case K::BinaryExpression: {
        std::string_view op = t.operator_text(e);
        if (op == "&&" || op == "||" || op == "<<" || op == ">>") return false;
        NodeId l = t.field(e, F::Left), r = t.field(e, F::Right);
        bool hl = host_expr(tu, fn, l);
        if (!hl && !plain_value(tu, fn, l)) return false;
        bool hr = host_expr(tu, fn, r);
        return hl ? hr || plain_value(tu, fn, r) : hr;
      }
      case K::ConditionalExpression:
        return host_expr(tu, fn, t.field(e, F::Consequence)) && host_expr(tu, fn, t.field(e, F::Alternative));
      case K::CallExpression: {
        auto it = call_at.find(key(tu, e));
        return it != call_at.end() && host_call(it->second);
      }
      default: return false;
    }
  }

  bool host_call(uint32_t id) {
    const CallSite& c = m.calls_[id];
    NodeId n = call_nodes[id];
    if (n == kNone) return false;
    const Tree& t = trees[c.tu];
    if (c.target >= 0) return host_return(static_cast<uint32_t>(c.target));
    if (c.holder_call) return false;
    if (!c.method.empty()) {
      NodeId recv = t.field(t.field(n, F::Function), F::Argument);
      if (c.method == "cpu" && c.args.empty()) return true;
      if (c.method == "pin_memory") return true;
      if (c.method == "cuda" || c.method == "type" || c.method == "copy_") return false;
      if (c.method == "to") {
        if (c.args.empty()) return false;
        std::string a0 = strip_spaces(c.args[0]);
        std::string q = resolve(c.tu, a0);
        if (torch_names::last(q) == "kCPU" || a0 == "\"cpu\"" || a0 == "torch::Device(torch::kCPU)" ||
            a0 == "at::Device(at::kCPU)")
          return true;
        // `.to(torch::kFloat)`: a dtype (kFloat, kLong...), the tensor stays where it is
        std::string_view l = torch_names::last(q);
        bool dtype = l.size() > 1 && l[0] == 'k' && std::isupper(static_cast<unsigned char>(l[1])) &&
                     !torch_names::is_device_constant(q);
        return dtype && host_expr(c.tu, c.function, recv);
      }
      // any other method of a tensor keeps it (and what it returns) where it is
      return host_expr(c.tu, c.function, recv);
    }
    // `std::get<0>(sorted)`, `std::move(x)`: the value itself
    if ((c.callee == "std::get" || c.callee == "std::move") && c.args.size() == 1)
      return host_expr(c.tu, c.function, arg_node(id, 0));
    if (torch_names::last(c.callee) == "from_blob" && (c.callee.rfind("torch::", 0) == 0 || c.callee.rfind("at::", 0) == 0)) {
      for (size_t i = 2; i < c.args.size(); ++i)
        if (may_carry_device(c.tu, c.function, arg_node(id, i))) return false;
      return true;
    }
    if (torch_names::is_tensor_factory(c.callee)) {
      for (size_t i = 0; i < c.args.size(); ++i) {
        NodeId a = arg_node(id, i);
        if (a == kNone || may_carry_device(c.tu, c.function, a)) return false;
      }
      return true;
    }
    return false;
  }

  bool host_var(uint32_t v) {
    uint8_t& memo = var_host[v];
    if (memo >= 2) return memo == 2;
    if (memo == 1) return false;  // a cycle: not certain
    memo = 1;
    const Variable& var = m.variables_[v];
    bool host = false;
    if (var.cls >= 0 || (var_flags[v] & kEscapes)) {
      host = false;
    } else if (var.parameter) {
      // every call of its function in the run passes a host-resident tensor here
      const Function& f = m.functions_[var.function];
      size_t i = std::find(f.params.begin(), f.params.end(), v) - f.params.begin();
      host = !f.callers.empty();
      for (uint32_t cid : f.callers) {
        if (!host) break;
        const CallSite& c = m.calls_[cid];
        NodeId a = arg_node(cid, i);
        host = a != kNone && host_expr(c.tu, c.function, a);
      }
    } else if (var_flags[v] & kLibraryBatch) {
      host = loader_batches_on_host;
    } else {
      host = !var_values[v].empty();
      for (NodeId val : var_values[v]) {
        if (!host) break;
        host = host_expr(var.tu, var.function, val);
      }
    }
    memo = host ? 2 : 3;  // var_host is sized once: the reference stays valid through the recursion
    return host;
  }

  // Every `return` of the analysed function gives a host-resident tensor.
  bool host_return(uint32_t f) {
    uint8_t& memo = fn_host[f];
    if (memo >= 2) return memo == 2;
    if (memo == 1) return false;
    memo = 1;
    auto [tu, def] = fn_defs[f];
    const Tree& t = trees[tu];
    std::vector<NodeId> returns;
    std::vector<NodeId> stack{t.field(def, F::Body)};
    while (!stack.empty()) {
      NodeId x = stack.back();
      stack.pop_back();
      if (x == kNone || t.is(x, K::LambdaExpression) || t.is(x, K::FunctionDefinition) || t.is(x, K::ClassSpecifier) ||
          t.is(x, K::StructSpecifier))
        continue;
      if (t.is(x, K::ReturnStatement)) {
        returns.push_back(t.first_named_child(x));
        continue;
      }
      for (NodeId ch = t.first_child(x); ch != kNone; ch = t.next_sibling(ch)) stack.push_back(ch);
    }
    bool host = !returns.empty();
    for (NodeId r : returns) {
      if (!host) break;
      host = host_expr(tu, static_cast<int32_t>(f), r);
    }
    memo = host ? 2 : 3;
    return host;
  }

  void host_facts() {
    var_host.assign(m.variables_.size(), 0);
    fn_host.assign(m.functions_.size(), 0);
    // a tensor reaching a non-const reference parameter of an analysed function may be replaced
    // there, and `std::swap(a, b)` exchanges two
    for (auto& c : m.calls_) {
      if ((c.callee == "std::swap" || c.callee == "swap" || c.method == "swap") && call_nodes[c.id] != kNone) {
        escape_names(c.tu, c.function, trees[c.tu].field(call_nodes[c.id], F::Arguments));
        if (!c.method.empty())  // a.swap(b)
          escape_names_in(c.tu, c.function, trees[c.tu].field(trees[c.tu].field(call_nodes[c.id], F::Function), F::Argument));
      }
      if (c.target < 0) continue;
      const Function& f = m.functions_[c.target];
      for (size_t i = 0; i < f.params.size(); ++i) {
        if (!(var_flags[f.params[i]] & kOutReference)) continue;
        NodeId a = arg_node(c.id, i);
        if (a == kNone || !trees[c.tu].is(a, K::Identifier)) continue;
        if (int32_t v = m.lookup(c.tu, c.function, trees[c.tu].text(a), trees[c.tu][a].start); v >= 0) var_flags[v] |= kEscapes;
      }
    }
    // a dataset, transform or collation of the run that places tensors on CUDA (or a `.map(...)`
    // given a device) makes no loader's batch certain to be on the host
    for (auto& c : m.calls_) {
      bool in_data_class = false;
      if (c.function >= 0 && fn_class[c.function] >= 0)
        for (auto& b : m.classes_[fn_class[c.function]].bases)
          if (b.find("Dataset") != std::string::npos || b.find("Transform") != std::string::npos ||
              b.find("Collation") != std::string::npos || b.find("Sampler") != std::string::npos)
            in_data_class = true;
      if ((in_data_class && c.places_on_cuda) ||
          (c.method == "map" && std::any_of(c.args.begin(), c.args.end(), [&](const std::string& a) {
             return mentions_cuda(c.tu, c.function, a, c.range.begin);
           })))
        loader_batches_on_host = false;
    }
    for (auto& c : m.calls_) {
      if (c.method.empty() || c.holder_call || call_nodes[c.id] == kNone) continue;
      NodeId recv = trees[c.tu].field(trees[c.tu].field(call_nodes[c.id], F::Function), F::Argument);
      c.receiver_on_host = host_expr(c.tu, c.function, recv);
    }
    for (size_t w = 0; w < m.streams_.size(); ++w) {
      auto& sw = m.streams_[w];
      sw.operand_on_host.assign(sw.operands.size(), 0);
      for (size_t i = 0; i < sw.operands.size(); ++i)
        if (sw.operand_types[i].kind == TypeKind::Tensor) sw.operand_on_host[i] = host_expr(sw.tu, sw.function, stream_operands[w][i]);
    }
  }

  static bool is_backward(const CallSite& c) {
    return (c.method == "backward" && c.receiver_type.kind != TypeKind::ModuleHolder) ||
           c.callee == "torch::autograd::backward";
  }
  bool is_optimizer_step(const CallSite& c) const {
    if (c.method != "step") return false;
    if (c.receiver_type.kind == TypeKind::Optimizer) return true;
    if (c.receiver_type.kind != TypeKind::Unknown) return false;
    std::string r = c.receiver;
    if (icontains(r, "sched")) return false;
    return icontains(r, "optim") || r == "opt" || icontains(r, "opt_") || r.ends_with("_opt") || r.ends_with("Opt");
  }

  // Marks every function that calls a marked function, transitively (through the callers lists,
  // each function once).
  void propagate_to_callers(std::vector<char>& f) const {
    std::deque<uint32_t> q;
    for (uint32_t i = 0; i < f.size(); ++i)
      if (f[i]) q.push_back(i);
    while (!q.empty()) {
      uint32_t g = q.front();
      q.pop_front();
      for (uint32_t cid : m.functions_[g].callers) {
        int32_t caller = m.calls_[cid].function;
        if (caller >= 0 && !f[caller]) {
          f[caller] = 1;
          q.push_back(static_cast<uint32_t>(caller));
        }
      }
    }
  }

  // transitive "calls X" per function
  std::vector<char> closure(const std::function<bool(const CallSite&)>& direct) const {
    std::vector<char> f(m.functions_.size(), 0);
    for (auto& c : m.calls_)
      if (c.function >= 0 && direct(c)) f[c.function] = 1;
    propagate_to_callers(f);
    return f;
  }

  bool loop_contains(const Loop& outer, int32_t inner_loop) const {
    for (int32_t l = inner_loop; l >= 0; l = m.loops_[l].parent)
      if (static_cast<uint32_t>(l) == outer.id) return true;
    return false;
  }

  // Per loop: does a strictly nested loop satisfy `nested`, or a call in it or a nested loop
  // satisfy `call`? (each fact climbs its loop's ancestors once)
  std::vector<char> loops_containing(const std::function<bool(const Loop&)>& nested,
                                     const std::function<bool(const CallSite&)>& call) const {
    std::vector<char> out(m.loops_.size(), 0);
    auto mark_up = [&](int32_t from) {
      for (int32_t l = from; l >= 0 && !out[l]; l = m.loops_[l].parent) out[l] = 1;
    };
    for (auto& k : m.loops_)
      if (nested(k)) mark_up(k.parent);
    for (auto& c : m.calls_)
      if (c.loop >= 0 && call(c)) mark_up(c.loop);
    return out;
  }

  void classify_loops() {
    auto fn_opt = closure([&](const CallSite& c) { return is_optimizer_step(c); });
    auto fn_bwd = closure([&](const CallSite& c) { return is_backward(c); });
    // per loop: calls (directly, in nested loops, or through analysed functions)
    for (auto& c : m.calls_) {
      bool opt = is_optimizer_step(c) || (c.target >= 0 && fn_opt[c.target]);
      bool bwd = is_backward(c) || (c.target >= 0 && fn_bwd[c.target]);
      for (int32_t l = c.loop; l >= 0; l = m.loops_[l].parent) {
        if (opt) m.loops_[l].calls_optimizer_step = true;
        if (bwd) m.loops_[l].calls_backward = true;
      }
    }
    // programs first: whether a program has an optimizer step decides rule 1 / 2's fallback
    build_programs(fn_opt);
    std::vector<char> tu_opt_call(m.tus_.size(), 0);
    for (auto& c : m.calls_)
      if (is_optimizer_step(c)) tu_opt_call[c.tu] = 1;
    auto opt_in_scope = [&](uint32_t tu) {
      if (m.tus_[tu].programs.empty()) return tu_opt_call[tu] != 0;
      for (uint32_t p : m.tus_[tu].programs)
        if (m.programs_[p].has_optimizer_step) return true;
      return false;
    };
    auto trains = [&](const Loop& l) { return opt_in_scope(l.tu) ? l.calls_optimizer_step : l.calls_backward; };
    // a function that contains a loop calling the optimizer step (backward), transitively
    std::vector<char> fn_loop_trains(m.functions_.size(), 0);
    for (auto& l : m.loops_)
      if (l.function >= 0 && trains(l)) fn_loop_trains[l.function] = 1;
    propagate_to_callers(fn_loop_trains);
    // the innermost training loop: no nested loop trains, no call in it reaches a training loop
    auto outer_of_training = loops_containing(trains, [&](const CallSite& c) {
      return c.target >= 0 && fn_loop_trains[c.target];
    });
    for (auto& l : m.loops_) {
      if (l.data_loop) {
        if (trains(l)) l.kind = LoopKind::TrainingStep;
        else if (!l.calls_backward && !l.calls_optimizer_step) l.kind = LoopKind::EvaluationStep;
        continue;
      }
      if (trains(l) && !outer_of_training[l.id]) l.kind = LoopKind::TrainingStep;
    }
    // a step loop nested in a training step loop is part of that step (micro-batches); only an
    // evaluation loop keeps its own kind there
    for (auto& l : m.loops_) {
      if (l.kind != LoopKind::TrainingStep) continue;
      for (int32_t p = l.parent; p >= 0; p = m.loops_[p].parent)
        if (m.loops_[p].kind == LoopKind::TrainingStep) l.kind = LoopKind::Other;
    }
    // epoch loops: contain a step loop, directly or through calls
    auto is_step = [](const Loop& l) { return l.kind == LoopKind::TrainingStep || l.kind == LoopKind::EvaluationStep; };
    std::vector<char> fn_has_step(m.functions_.size(), 0);
    for (auto& l : m.loops_)
      if (l.function >= 0 && is_step(l)) fn_has_step[l.function] = 1;
    propagate_to_callers(fn_has_step);
    auto outer_of_step = loops_containing(is_step, [&](const CallSite& c) { return c.target >= 0 && fn_has_step[c.target]; });
    for (auto& l : m.loops_) {
      if (l.kind != LoopKind::Other) continue;
      bool in_step = false;
      for (int32_t p = l.parent; p >= 0; p = m.loops_[p].parent)
        if (is_step(m.loops_[p])) in_step = true;
      if (!in_step && outer_of_step[l.id]) l.kind = LoopKind::Epoch;
    }
  }

  void build_programs(const std::vector<char>& fn_opt) {
    for (auto& f : m.functions_) {
      if (!f.is_main) continue;
      Program p;
      p.id = static_cast<uint32_t>(m.programs_.size());
      p.entry = f.tu;
      p.main = static_cast<int32_t>(f.id);
      std::vector<char> seen(m.functions_.size(), 0);
      std::deque<uint32_t> q{f.id};
      seen[f.id] = 1;
      while (!q.empty()) {
        uint32_t g = q.front();
        q.pop_front();
        p.functions.push_back(g);
        for (uint32_t cid : m.functions_[g].calls) {
          int32_t tgt = m.calls_[cid].target;
          if (tgt >= 0 && !seen[tgt]) {
            seen[tgt] = 1;
            q.push_back(static_cast<uint32_t>(tgt));
          }
        }
      }
      p.members.push_back(f.tu);
      auto add_member = [&](uint32_t tu) {
        if (std::find(p.members.begin(), p.members.end(), tu) == p.members.end()) p.members.push_back(tu);
      };
      for (uint32_t g : p.functions) {
        add_member(m.functions_[g].tu);
        // the header that defines the class of a reachable method (its member initializers)
        if (fn_class[g] >= 0) add_member(m.classes_[fn_class[g]].tu);
      }
      p.has_optimizer_step = fn_opt[f.id];
      std::vector<uint32_t> sorted = p.functions;
      std::sort(sorted.begin(), sorted.end());
      m.reachable_by_program_.push_back(std::move(sorted));
      for (uint32_t tu : p.members) m.tus_[tu].programs.push_back(p.id);
      m.programs_.push_back(std::move(p));
    }
  }

  // Is `name` changed across the iterations of `loop` or a loop around it (its variable, a name
  // assigned or incremented in its body)?
  bool changes_in_loops(int32_t loop, const std::string& name) const {
    for (int32_t l = loop; l >= 0; l = m.loops_[l].parent) {
      if (m.loops_[l].loop_var == name) return true;
      if (static_cast<size_t>(l) < changed_in.size() && changed_in[l].count(name)) return true;
    }
    return false;
  }

  // The parameters that vary: bound, at some call, to an argument that reads a name changing
  // across the iterations of a loop around the call, or a varying parameter of the caller. A
  // parameter bound only to configuration (`after_step(opts)`) does not vary.
  std::vector<std::vector<char>> varying_params() const {
    std::vector<std::vector<char>> pv(m.functions_.size());
    for (auto& f : m.functions_) pv[f.id].assign(f.params.size(), 0);
    auto varies_at = [&](const CallSite& c, const std::string& n) {
      if (changes_in_loops(c.loop, n)) return true;
      if (c.function < 0) return false;
      const auto& ps = m.functions_[c.function].params;
      for (size_t i = 0; i < ps.size(); ++i)
        if (pv[c.function][i] && m.variables_[ps[i]].name == n) return true;
      return false;
    };
    std::deque<uint32_t> work;
    std::vector<char> queued(m.functions_.size(), 1);
    for (auto& f : m.functions_) work.push_back(f.id);
    while (!work.empty()) {
      uint32_t f = work.front();
      work.pop_front();
      queued[f] = 0;
      for (uint32_t cid : m.functions_[f].calls) {
        const CallSite& c = m.calls_[cid];
        if (c.target < 0) continue;
        auto& tp = pv[c.target];
        bool grew = false;
        for (size_t i = 0; i < c.args.size() && i < tp.size(); ++i) {
          if (tp[i]) continue;
          for (auto& id : identifiers(c.args[i]))
            if (varies_at(c, id)) {
              tp[i] = 1;
              grew = true;
              break;
            }
        }
        if (grew && !queued[c.target]) {
          queued[c.target] = 1;
          work.push_back(static_cast<uint32_t>(c.target));
        }
      }
    }
    return pv;
  }

  void guard_varying() {
    auto pv = varying_params();
    for (size_t gi = 0; gi < m.guards_.size(); ++gi) {
      Guard& g = m.guards_[gi];
      const GuardFacts& gf = guard_facts[gi];
      bool varying = gf.percent;
      for (auto& n : gf.names) {
        if (varying) break;
        if (changes_in_loops(g.loop, n)) varying = true;
        if (gf.function >= 0) {
          const auto& ps = m.functions_[gf.function].params;
          for (size_t i = 0; i < ps.size(); ++i)
            if (pv[gf.function][i] && m.variables_[ps[i]].name == n) varying = true;
        }
      }
      g.varying = varying;
    }
  }

  // Does the call run every iteration of the step loop `s` it sits in? (no epoch loop or varying
  // guard between them)
  bool unguarded_within(const Site& site, int32_t step_loop) const {
    for (uint32_t g : site.guards) {
      const Guard& gd = m.guards_[g];
      bool inside = step_loop < 0 ? true : false;
      for (int32_t l = gd.loop; l >= 0 && !inside; l = m.loops_[l].parent)
        if (l == step_loop) inside = true;
      if (inside && gd.varying) return false;
    }
    return true;
  }

  void compute_reach() {
    m.reach_.assign(m.functions_.size(), std::nullopt);
    std::deque<uint32_t> q;
    // calls made in a step loop, unguarded within it: (the innermost step loop around it, call)
    std::vector<std::pair<uint32_t, uint32_t>> seeds;
    for (auto& c : m.calls_) {
      if (c.target < 0 || c.loop < 0) continue;
      int32_t step = -1;
      for (int32_t p = c.loop; p >= 0 && step < 0; p = m.loops_[p].parent)
        if (m.loops_[p].kind == LoopKind::TrainingStep || m.loops_[p].kind == LoopKind::EvaluationStep) step = p;
      if (step < 0 || !unguarded_within(c, step)) continue;
      seeds.emplace_back(static_cast<uint32_t>(step), c.id);
    }
    std::sort(seeds.begin(), seeds.end());  // loop order, then call order: the first claim wins
    for (auto [loop, cid] : seeds) {
      const CallSite& c = m.calls_[cid];
      if (m.reach_[c.target]) continue;
      m.reach_[c.target] = StepContext{loop, {c.id}};
      q.push_back(static_cast<uint32_t>(c.target));
    }
    while (!q.empty()) {
      uint32_t f = q.front();
      q.pop_front();
      const StepContext sc = *m.reach_[f];
      if (sc.chain.size() >= 6) continue;
      for (uint32_t cid : m.functions_[f].calls) {
        const CallSite& c = m.calls_[cid];
        if (c.target < 0 || m.reach_[c.target]) continue;
        bool epoch = false;
        for (int32_t p = c.loop; p >= 0; p = m.loops_[p].parent)
          if (m.loops_[p].kind != LoopKind::Other) epoch = true;
        if (epoch || !unguarded_within(c, -1)) continue;
        StepContext next = sc;
        next.chain.push_back(cid);
        m.reach_[c.target] = std::move(next);
        q.push_back(static_cast<uint32_t>(c.target));
      }
    }
  }

  void cuda_facts() {
    m.tu_places_on_cuda_.assign(m.tus_.size(), 0);
    std::vector<const CallSite*> placing;
    for (auto& c : m.calls_)
      if (c.places_on_cuda) {
        placing.push_back(&c);
        m.tu_places_on_cuda_[c.tu] = 1;
      }
    for (auto& p : m.programs_)
      for (const CallSite* c : placing)
        if (m.runs_in_program(p, *c)) {
          p.on_cuda = true;
          break;
        }
  }
};

// ------------------------------------------------------------------ queries

namespace {
constexpr int64_t kLocalScope = 0, kClassScope = int64_t{1} << 40, kTuScope = int64_t{2} << 40;
}

void Model::index_variable(uint32_t vi) {
  const Variable& v = variables_[vi];
  int64_t scope = v.function >= 0 ? kLocalScope + v.function : v.cls >= 0 ? kClassScope + v.cls : kTuScope + v.tu;
  auto& vs = by_scope_name_[ScopeName{scope, v.name}];
  // kept in declaration order (a range-for variable is recorded after its range expression)
  auto at = std::upper_bound(vs.begin(), vs.end(), v.decl.begin,
                             [&](uint32_t b, uint32_t x) { return b < variables_[x].decl.begin; });
  vs.insert(at, vi);
  if (v.function >= 0) {
    if (locals_.size() <= static_cast<size_t>(v.function)) locals_.resize(v.function + 1);
    locals_[v.function].push_back(vi);
  }
}

const std::vector<uint32_t>& Model::locals(int32_t fn) const {
  static const std::vector<uint32_t> none;
  return fn >= 0 && static_cast<size_t>(fn) < locals_.size() ? locals_[fn] : none;
}

int32_t Model::lookup(uint32_t tu, int32_t fn, std::string_view name, uint32_t offset) const {
  ScopeName key{0, std::string(name)};
  auto vars = [&](int64_t scope) -> const std::vector<uint32_t>* {
    key.scope = scope;
    auto it = by_scope_name_.find(key);
    return it == by_scope_name_.end() ? nullptr : &it->second;
  };
  if (fn >= 0) {
    // the innermost visible declaration: the latest one before `offset` whose block is still open
    if (auto* vs = vars(kLocalScope + fn)) {
      auto end = std::upper_bound(vs->begin(), vs->end(), offset,
                                  [&](uint32_t off, uint32_t x) { return off < variables_[x].decl.begin; });
      for (auto it = end; it != vs->begin();) {
        const Variable& v = variables_[*--it];
        if (v.tu == tu && offset <= v.scope_end) return static_cast<int32_t>(*it);
      }
    }
    const std::string& cls = functions_[fn].cls;
    if (!cls.empty())
      if (auto it = classes_by_name_.find(cls); it != classes_by_name_.end())
        for (uint32_t c : it->second)
          if (auto* vs = vars(kClassScope + c)) return static_cast<int32_t>(vs->front());
  }
  if (auto* vs = vars(kTuScope + tu)) return static_cast<int32_t>(vs->front());
  return -1;
}

int32_t Model::find_function(std::string_view q) const {
  for (auto& f : functions_)
    if (f.qualified_name == q) return static_cast<int32_t>(f.id);
  return -1;
}

bool Model::runs_in_program(const Program& p, const Site& s) const {
  if (s.function < 0) return std::find(p.members.begin(), p.members.end(), s.tu) != p.members.end();
  const auto& fns = reachable_by_program_[p.id];
  return std::binary_search(fns.begin(), fns.end(), static_cast<uint32_t>(s.function));
}

bool Model::on_cuda(uint32_t tu) const {
  const auto& ps = tus_[tu].programs;
  if (ps.empty()) return tu < tu_places_on_cuda_.size() && tu_places_on_cuda_[tu];
  for (uint32_t p : ps)
    if (programs_[p].on_cuda) return true;
  return false;
}

std::optional<StepContext> Model::runs_every_step(const Site& s) const {
  for (int32_t l = s.loop; l >= 0; l = loops_[l].parent) {
    LoopKind k = loops_[l].kind;
    if (k == LoopKind::Epoch) return std::nullopt;
    if (k == LoopKind::TrainingStep || k == LoopKind::EvaluationStep) {
      for (uint32_t g : s.guards) {
        const Guard& gd = guards_[g];
        bool inside = false;
        for (int32_t x = gd.loop; x >= 0 && !inside; x = loops_[x].parent)
          if (x == l) inside = true;
        if (inside && gd.varying) return std::nullopt;
      }
      return StepContext{static_cast<uint32_t>(l), {}};
    }
  }
  if (s.function < 0 || !reach_[s.function]) return std::nullopt;
  for (uint32_t g : s.guards)
    if (guards_[g].varying) return std::nullopt;
  return reach_[s.function];
}

Model Model::build(const std::vector<const SourceFile*>& files, const TypedFacts* typed, unsigned threads) {
  Model m;
  Builder b(m);
  // The parses are independent: on the run's threads, the largest files first; the rest of the
  // build reads the trees in file order.
  b.trees.resize(files.size());
  parallel_for_largest_first(
      files.size(), threads, [&](size_t i) { return files[i]->text().size(); },
      [&](size_t i) { b.trees[i] = Tree::parse(*files[i]); });
  for (uint32_t i = 0; i < files.size(); ++i) {
    const TypedFile* tf = nullptr;
    if (typed)
      if (auto it = typed->find(files[i]->path()); it != typed->end()) tf = &it->second;
    b.typed.push_back(tf);
    TranslationUnit tu;
    tu.index = i;
    tu.src = files[i];
    tu.path = files[i]->path();
    m.tus_.push_back(std::move(tu));
    for (auto& [off, msg] : b.trees[i].errors()) m.tus_[i].syntax_errors.emplace_back(files[i]->line_col(off), msg);
    b.tu_vars.emplace_back();
  }
  for (uint32_t i = 0; i < files.size(); ++i)
    if (b.trees[i].root() != kNone) b.collect_decls(i, b.trees[i].root(), "", -1);
  b.finish_classes();
  for (uint32_t i = 0; i < files.size(); ++i)
    if (b.trees[i].root() != kNone) b.walk_namespace_scope(i, b.trees[i].root());
  b.walk_member_initializers();
  for (uint32_t f = 0; f < m.functions_.size(); ++f) b.walk_function(f);
  for (auto [tu, off] : b.truncated_tus)
    m.tus_[tu].syntax_errors.emplace_back(files[tu]->line_col(off), "nested more than 1500 levels deep: not analysed further");
  b.resolve_targets();
  b.device_facts();
  b.host_facts();
  b.classify_loops();
  b.guard_varying();
  b.compute_reach();
  b.cuda_facts();
  return m;
}

}  // namespace tl::cpp
