#include "analyzer/python/model.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <deque>
#include <filesystem>
#include <functional>
#include <thread>

#include "analyzer/python/collect.h"
#include "analyzer/python/guards.h"

namespace tl::py {

// ---- small helpers ----------------------------------------------------------------------

std::string_view last_component(std::string_view d) {
  auto p = d.rfind('.');
  return p == std::string_view::npos ? d : d.substr(p + 1);
}

bool icontains(std::string_view hay, std::string_view needle) {
  if (needle.size() > hay.size()) return false;
  if (needle.empty()) return true;
  const char first = ascii_lower(needle[0]);
  for (size_t i = 0, last = hay.size() - needle.size(); i <= last; ++i) {
    if (ascii_lower(hay[i]) != first) continue;
    size_t k = 1;
    while (k < needle.size() && ascii_lower(hay[i + k]) == ascii_lower(needle[k])) ++k;
    if (k == needle.size()) return true;
  }
  return false;
}

namespace {
// 1 for a literal that is always true, 0 for one always false, -1 otherwise.
int literal_truth(const Tree& t, NodeId c) {
  while (c != kNone && t.is(c, K::ParenthesizedExpression)) c = t.first_named_child(c);
  if (c == kNone) return -1;
  if (t.is(c, K::True)) return 1;
  if (t.is(c, K::False) || t.is(c, K::None)) return 0;
  if (t.is(c, K::Integer)) {  // 0, 0x0, 0_0: false; any other integer: true
    std::string_view v = t.text(c);
    if (v.size() > 2 && v[0] == '0' && std::string_view("xXoObB").find(v[1]) != std::string_view::npos) v.remove_prefix(2);
    return v.find_first_not_of("0_") == std::string_view::npos ? 0 : 1;
  }
  return -1;
}
}  // namespace

std::vector<std::pair<uint32_t, uint32_t>> dead_branches(const Tree& t) {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  auto add = [&](NodeId body) {
    if (body != kNone) out.emplace_back(t[body].start, t[body].end);
  };
  for (NodeId n = 0; n < t.size(); ++n) {
    if (!t.is(n, K::IfStatement)) continue;
    int first = literal_truth(t, t.field(n, F::Condition));
    bool taken = first == 1;  // an earlier branch always runs: the rest never do
    if (first == 0) add(t.field(n, F::Consequence));
    for (NodeId a : t.named_child_range(n)) {
      if (t.is(a, K::ElifClause)) {
        if (taken) { add(a); continue; }
        int v = literal_truth(t, t.field(a, F::Condition));
        if (v == 0) add(t.field(a, F::Consequence));
        if (v == 1) taken = true;
      } else if (t.is(a, K::ElseClause) && taken) {
        add(a);
      }
    }
  }
  return out;
}

NodeId last_statement(const Tree& t, NodeId block) {
  NodeId last = kNone;
  for (NodeId c : t.named_child_range(block)) last = c;
  return last;
}

std::string dotted_text(const Tree& t, NodeId n) {
  if (n == kNone) return {};
  if (t.is(n, K::Identifier)) return std::string(t.text(n));
  if (t.is(n, K::Attribute)) {
    NodeId o = t.field(n, F::Object), a = t.field(n, F::Attribute);
    if (o == kNone || a == kNone) return {};
    std::string base = dotted_text(t, o);
    if (base.empty()) return {};
    return base + "." + std::string(t.text(a));
  }
  return {};
}

std::string string_literal_value(const Tree& t, NodeId n) {
  if (n == kNone || !t.is(n, K::String)) return {};
  std::string_view s = t.text(n);
  size_t i = 0;
  while (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i]))) {
    if (s[i] == 'f' || s[i] == 'F') return {};  // f-strings are not literals
    ++i;
  }
  s.remove_prefix(i);
  size_t q = (s.size() >= 6 && (s.substr(0, 3) == "\"\"\"" || s.substr(0, 3) == "'''")) ? 3 : 1;
  if (s.size() < 2 * q) return {};
  return std::string(s.substr(q, s.size() - 2 * q));
}

std::string_view loop_kind_name(LoopKind k) {
  switch (k) {
    case LoopKind::TrainStep: return "training step loop";
    case LoopKind::EvalStep: return "evaluation step loop";
    case LoopKind::Epoch: return "epoch loop";
    default: return "loop";
  }
}

Function* Class::find_method(std::string_view name, int depth) const {
  auto it = methods.find(name);
  if (it != methods.end()) return it->second;
  if (depth > 8) return nullptr;
  for (Class* b : local_bases)
    if (b != this)
      if (Function* f = b->find_method(name, depth + 1)) return f;
  return nullptr;
}

bool Class::derives_from(std::initializer_list<std::string_view> qnames, int depth) const {
  for (auto& b : bases)
    for (auto q : qnames)
      if (b == q) return true;
  if (depth > 8) return false;
  for (Class* b : local_bases)
    if (b != this && b->derives_from(qnames, depth + 1)) return true;
  return false;
}

Function* Module::enclosing_function(NodeId n) const {
  // the innermost function_definition holding n: the last one starting at or before n, or the
  // nearest around that one which still holds n (pre-order: a subtree is a range of ids)
  if (n == kNone || n >= tree.size()) return nullptr;
  auto it = std::upper_bound(fn_defs.begin(), fn_defs.end(), n);
  int32_t i = static_cast<int32_t>(it - fn_defs.begin()) - 1;
  while (i >= 0 && !tree.contains(fn_defs[static_cast<size_t>(i)], n)) i = fn_def_outer[static_cast<size_t>(i)];
  return i < 0 ? nullptr : fn_def_fn[static_cast<size_t>(i)];
}

Function* Module::function_of_def(NodeId def) const {
  auto it = std::lower_bound(fn_defs.begin(), fn_defs.end(), def);
  return it == fn_defs.end() || *it != def ? nullptr : fn_def_fn[static_cast<size_t>(it - fn_defs.begin())];
}

bool ValueSet::is_truthy_literal(const Literal& l) const {
  switch (l.kind) {
    case Literal::Kind::Bool: return l.text == "True";
    case Literal::Kind::None: return false;
    case Literal::Kind::Int: return l.text != "0";
    case Literal::Kind::Float: return l.text != "0.0" && l.text != "0";
    case Literal::Kind::Str: return !l.text.empty();
  }
  return false;
}

namespace {
// Names of Python's builtins module that a star import of a library does not replace. Those
// that `from numpy import *` does replace (abs, all, any, max, min, round, sum, pow, bool,
// divmod) are left out: after an unanalysed star import they stay unknown.
bool is_python_builtin(std::string_view n) {
  static const std::unordered_set<std::string_view> names = {
      "ascii", "bin", "bytearray", "bytes", "callable", "chr", "compile", "delattr", "dict", "dir", "enumerate",
      "eval", "exec", "filter", "float", "format", "frozenset", "getattr", "globals", "hasattr", "hash", "help", "hex",
      "id", "input", "int", "isinstance", "issubclass", "iter", "len", "list", "locals", "map", "memoryview", "next",
      "oct", "open", "ord", "print", "property", "range", "repr", "reversed", "set", "setattr", "slice", "sorted",
      "staticmethod", "str", "super", "tuple", "type", "vars", "zip"};
  return names.count(n) > 0;
}
}  // namespace

namespace {
// Methods of nn.Module that return the module itself.
bool keeps_instance(std::string_view m) {
  return m == "to" || m == "cuda" || m == "cpu" || m == "train" || m == "eval" || m == "half" || m == "float" ||
         m == "double" || m == "bfloat16" || m == "requires_grad_" || m == "to_empty" || m == "xpu";
}
}  // namespace

// ---- ProgramModel ---------------------------------------------------------------------

ProgramModel::ProgramModel() = default;
ProgramModel::~ProgramModel() = default;
ProgramModel::ProgramModel(ProgramModel&&) noexcept = default;
ProgramModel& ProgramModel::operator=(ProgramModel&&) noexcept = default;


const Scope* ProgramModel::scope_at(const Module& m, NodeId n) const {
  Function* f = m.enclosing_function(n);
  // A function's own name and decorators belong to the enclosing scope, its body to its own.
  // (Parameter defaults are evaluated in the enclosing scope too.)
  if (f && (n == f->def || (f->body != kNone && !m.tree.contains(f->body, n)))) f = f->outer;
  return f ? &f->scope : &m.scope;
}

namespace {
std::string path_key(const std::string& p) {
  return std::filesystem::path(p).lexically_normal().generic_string();
}
}  // namespace

Module* ProgramModel::module_for(std::string_view qname, std::string* rest, const Module* from) const {
  // Longest dotted prefix of qname that names an analysed module. Several analysed files can
  // share a name (every repository has a train.py and a utils.py): take the one nearest to the
  // importing file, as Python's path would from the script's folder.
  std::string q(qname);
  while (!q.empty()) {
    auto it = by_dotted_.find(q);
    if (it != by_dotted_.end() && !it->second.empty()) {
      // A name that starts inside a package (`tensordict` for pkg/data/tensordict.py) is not the
      // module's name to an importer elsewhere: `from tensordict import X` there is the
      // installed package. None importable: a shorter prefix may name one.
      const size_t parts = static_cast<size_t>(std::count(q.begin(), q.end(), '.')) + 1;
      auto importable = [&](const Module* cand) {
        if (!from || parts > 8 || !(cand->inner_names >> (parts - 1) & 1)) return true;
        return name_start_folder(*cand, parts) == name_start_folder(*from, 1);
      };
      Module* best = nullptr;
      size_t best_common = 0;
      for (Module* cand : it->second) {
        if (!importable(cand)) continue;
        if (!from) {
          best = cand;
          break;
        }
        size_t common = 0, lim = std::min(cand->key.size(), from->key.size());
        while (common < lim && cand->key[common] == from->key[common]) ++common;
        // count only whole folders
        while (common > 0 && cand->key[common - 1] != '/') --common;
        if (!best || common > best_common) {
          best = cand;
          best_common = common;
        }
      }
      if (best) {
        if (rest) *rest = qname.size() > q.size() ? std::string(qname.substr(q.size() + 1)) : std::string();
        return best;
      }
    }
    auto p = q.rfind('.');
    if (p == std::string::npos) break;
    q.resize(p);
  }
  return nullptr;
}

// The folder (absolute, '/'-separated, no trailing '/') where the dotted name of `m` made of its
// last `parts` components starts: for pkg/sub/mod.py, 1 -> pkg/sub, 2 -> pkg; for
// pkg/sub/__init__.py, 1 -> pkg.
std::string ProgramModel::name_start_folder(const Module& m, size_t parts) {
  std::string_view k = m.key;
  size_t slash = k.rfind('/');
  if (slash == std::string_view::npos) return std::string();
  std::string_view file = k.substr(slash + 1);
  k = k.substr(0, slash);  // the file's folder
  if (file == "__init__.py") ++parts;
  for (size_t i = 1; i < parts; ++i) {
    slash = k.rfind('/');
    if (slash == std::string_view::npos) return std::string();
    k = k.substr(0, slash);
  }
  return std::string(k);
}

uint8_t ProgramModel::inner_names_of(const Module& m) const {
  uint8_t bits = 0;
  for (size_t parts = 1; parts <= 8; ++parts) {
    std::string start = name_start_folder(m, parts);
    if (start.empty()) break;
    if (by_dotted_.count("@path:" + start + "/__init__.py")) bits |= static_cast<uint8_t>(1u << (parts - 1));
  }
  return bits;
}

Module* ProgramModel::relative_module(const Module& from, const std::string& q, std::string* rest) const {
  // The answer depends on `from` only through its folder: everything before the file name.
  const size_t slash = from.key.rfind('/');
  std::string key = slash == std::string::npos ? std::string() : from.key.substr(0, slash + 1);
  key += '\0';
  key += q;
  auto& shard = relative_memo_->shards[std::hash<std::string>{}(key) % relative_memo_->shards.size()];
  {
    std::lock_guard<std::mutex> lock(shard.mu);
    if (auto it = shard.answers.find(key); it != shard.answers.end()) {
      if (rest && it->second.first) *rest = it->second.second;
      return it->second.first;
    }
  }
  std::string r;
  Module* m = relative_module_uncached(from, q, &r);
  std::lock_guard<std::mutex> lock(shard.mu);
  shard.answers.try_emplace(std::move(key), m, r);
  if (rest && m) *rest = std::move(r);
  return m;
}

Module* ProgramModel::relative_module_uncached(const Module& from, const std::string& q, std::string* rest) const {
  size_t dots = 0;
  while (dots < q.size() && q[dots] == '.') ++dots;
  std::filesystem::path dir = std::filesystem::path(from.key).parent_path();
  for (size_t i = 1; i < dots; ++i) dir = dir.parent_path();
  std::vector<std::string> comps;
  std::string remain = q.substr(dots);
  for (size_t s0 = 0; !remain.empty();) {
    size_t e = remain.find('.', s0);
    comps.push_back(remain.substr(s0, e == std::string::npos ? std::string::npos : e - s0));
    if (e == std::string::npos) break;
    s0 = e + 1;
  }
  // The candidates' keys are path_key() of the joined path. Where the folder is absolute and
  // already normal (a module's key is) and every component a plain name, joining with '/' gives
  // that key without std::filesystem's normalisation (18 K instructions a question: 4% of a run
  // after a one-file edit on Debian's torch package).
  const std::string dir_s = dir.generic_string();
  bool plain = !dir_s.empty() && dir_s.front() == '/' && dir_s.find("/./") == std::string::npos &&
               dir_s.find("/../") == std::string::npos && dir_s.find("//") == std::string::npos &&
               !dir_s.ends_with("/.") && !dir_s.ends_with("/..");
  for (auto& c : comps) plain = plain && !c.empty() && c != "." && c != ".." && c.find('/') == std::string::npos;
  // the first `take` components below the folder, as a module file or as a package's __init__.py
  auto key = [&](size_t take, bool package) {
    if (!plain) {
      std::filesystem::path p = dir;
      for (size_t i = 0; i < take; ++i) p /= comps[i];
      return "@path:" + path_key(package ? (p / "__init__.py").string() : p.string() + ".py");
    }
    std::string joined = dir_s;
    for (size_t i = 0; i < take; ++i) {
      if (joined.back() != '/') joined += '/';
      joined += comps[i];
    }
    if (!package) return "@path:" + joined + ".py";
    if (joined.back() != '/') joined += '/';
    return "@path:" + joined + "__init__.py";
  };
  for (size_t take = comps.size() + 1; take-- > 0;) {
    for (bool package : {false, true}) {
      auto it = by_dotted_.find(key(take, package));
      if (it == by_dotted_.end() || it->second.empty()) continue;
      if (rest) {
        rest->clear();
        for (size_t i = take; i < comps.size(); ++i) *rest += (rest->empty() ? "" : ".") + comps[i];
      }
      return it->second.front();
    }
  }
  return nullptr;
}

namespace {
thread_local uint64_t t_param_lookups = 0;
}  // namespace

uint64_t ProgramModel::param_lookups() { return t_param_lookups; }

ProgramModel::Resolved ProgramModel::resolve(const Module& m, NodeId expr, const Scope* scope, int depth) const {
  Resolved r;
  const Tree& t = m.tree;
  if (expr == kNone || depth > 10) return r;
  std::function<Resolved(std::string_view, const Module&)> from_qname;
  auto from_bindings = [&](const Bindings& bs, const Module& mm, std::string_view name) -> Resolved {
    Resolved out;
    // Definitions win (the last one); otherwise an import or a plain alias assignment.
    const Binding* def = nullptr;
    const Binding* imp = nullptr;
    int assigns = 0;
    const Binding* alias = nullptr;
    bool other = false;
    for (auto& b : bs) {
      switch (b.kind) {
        case Binding::Kind::Def: case Binding::Kind::ClassDef: def = &b; break;
        case Binding::Kind::Import: imp = &b; break;
        case Binding::Kind::Assign:
          if (b.whole && b.value != kNone) {
            K vk = mm.tree.kind(b.value);
            if (vk == K::None) break;  // `x = None` fallbacks do not hide an import
            ++assigns;
            alias = &b;
          } else {
            other = true;
          }
          break;
        default: other = true; break;
      }
    }
    if (def) {
      if (def->kind == Binding::Kind::Def) { out.kind = Resolved::Kind::Function; out.fn = def->fn; }
      else { out.kind = Resolved::Kind::Class; out.cls = def->cls; }
      return out;
    }
    if (other) return out;
    if (imp && assigns == 0) return from_qname(imp->qname, mm);
    // x = Net(...).to(device), or x = Net(); x = x.to(device): an instance of the analysed class
    if (!imp && assigns >= 1) {
      Class* cls = nullptr;
      bool all = true;
      for (auto& b : bs) {
        if (b.kind != Binding::Kind::Assign || !b.whole || b.value == kNone || mm.tree.is(b.value, K::None)) continue;
        NodeId v = b.value;
        bool stripped = false;
        while (mm.tree.is(v, K::Call)) {
          NodeId fn = mm.tree.field(v, F::Function);
          if (fn == kNone || !mm.tree.is(fn, K::Attribute)) break;
          NodeId a = mm.tree.field(fn, F::Attribute), o = mm.tree.field(fn, F::Object);
          if (a == kNone || o == kNone || !keeps_instance(mm.tree.text(a))) break;
          v = o;
          stripped = true;
        }
        if (stripped && mm.tree.is(v, K::Identifier) && mm.tree.text(v) == name) continue;  // x = x.to(device)
        if (!mm.tree.is(v, K::Call)) { all = false; break; }
        Resolved c = resolve(mm, mm.tree.field(v, F::Function), scope_at(mm, v), depth + 1);
        if (c.kind != Resolved::Kind::Class || (cls && cls != c.cls)) { all = false; break; }
        cls = c.cls;
      }
      if (all && cls) {
        out.kind = Resolved::Kind::Instance;
        out.cls = cls;
        return out;
      }
    }
    if (!imp && assigns == 1 && alias) {
      NodeId v = alias->value;
      K vk = mm.tree.kind(v);
      if (vk == K::Identifier || vk == K::Attribute) {
        if (vk == K::Identifier && mm.tree.text(v) == name) return out;
        return resolve(mm, v, scope_at(mm, v), depth + 1);
      }
      if (vk == K::Call) {
        // x = SomeAnalysedClass(...): an instance
        NodeId callee = mm.tree.field(v, F::Function);
        Resolved c = resolve(mm, callee, scope_at(mm, v), depth + 1);
        if (c.kind == Resolved::Kind::Class) {
          out.kind = Resolved::Kind::Instance;
          out.cls = c.cls;
        }
        return out;
      }
    }
    return out;
  };

  // A qualified name from an import: an analysed module (relative imports resolve against the
  // importing file's folder) plus the names inside it, or an external name.
  auto in_module = [&](Module* target, const std::string& rest) -> Resolved {
    Resolved out;
    out.kind = Resolved::Kind::Module;
    out.mod = target;
    size_t pos = 0;
    while (pos < rest.size()) {
      size_t dot = rest.find('.', pos);
      std::string part = rest.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos);
      pos = dot == std::string::npos ? rest.size() : dot + 1;
      switch (out.kind) {
        case Resolved::Kind::External: out.qname += "." + part; break;
        case Resolved::Kind::Module: {
          Module* mm = out.mod;
          if (auto* bs = mm->scope.find_local(part)) {
            out = from_bindings(*bs, *mm, part);
          } else {
            std::string sub;
            Module* subm = module_for(mm->dotted + "." + part, &sub, mm);
            if (subm && subm != mm && sub.empty()) {
              out = Resolved{};
              out.kind = Resolved::Kind::Module;
              out.mod = subm;
            } else {
              return Resolved{};
            }
          }
          break;
        }
        case Resolved::Kind::Class: case Resolved::Kind::Instance: {
          Function* f = out.cls->find_method(part);
          out = Resolved{};
          if (f) {
            out.kind = Resolved::Kind::Function;
            out.fn = f;
          }
          break;
        }
        default: return Resolved{};
      }
    }
    return out;
  };
  from_qname = [&](std::string_view q, const Module& from) -> Resolved {
    if (!q.empty() && q[0] == '.') {
      std::string rest;
      Module* target = relative_module(from, std::string(q), &rest);
      if (!target) return Resolved{};  // an unanalysed relative module: unknown, never a guess
      return in_module(target, rest);
    }
    std::string rest;
    Module* target = module_for(q, &rest, &from);
    if (!target || target == &from) {
      Resolved out;
      out.kind = Resolved::Kind::External;
      out.qname = q;
      return out;
    }
    return in_module(target, rest);
  };

  switch (t.kind(expr)) {
    case K::Identifier: {
      std::string_view name = t.text(expr);
      for (const Scope* s = scope; s; s = s->parent) {
        if (s->globals.count(name)) {
          s = &m.scope;
          if (auto* bs = s->find_local(name)) return from_bindings(*bs, m, name);
          break;
        }
        if (auto* bs = s->find_local(name)) {
          // a parameter every analysed caller fills with an instance of one analysed class
          if (s->fn && bs->size() == 1 && (*bs)[0].kind == Binding::Kind::Param) {
            ++t_param_lookups;
            if (auto it = param_instances_.find(s->fn); it != param_instances_.end())
              if (auto pit = it->second.find(name); pit != it->second.end()) {
                r.kind = Resolved::Kind::Instance;
                r.cls = pit->second;
                return r;
              }
          }
          return from_bindings(*bs, m, name);
        }
      }
      // star imports of analysed modules
      for (auto& [sm, node] : m.star_imports) {
        if (!name.empty() && name[0] == '_') continue;
        if (auto* bs = sm->scope.find_local(name)) return from_bindings(*bs, *sm, name);
      }
      if (!m.star_import_names.empty() && m.star_imports.size() < m.star_import_names.size() &&
          !is_python_builtin(name)) {
        // An external star import could bring this name: unknown, never a guess. Builtins stay
        // builtins: a module that exports its own `print` to star importers is not a habit.
        return r;
      }
      r.kind = Resolved::Kind::External;
      r.qname = "builtins." + std::string(name);
      return r;
    }
    case K::Attribute: {
      NodeId obj = t.field(expr, F::Object), attr = t.field(expr, F::Attribute);
      if (obj == kNone || attr == kNone) return r;
      std::string a(t.text(attr));
      if (t.is(obj, K::Identifier) && t.text(obj) == "self") {
        Function* f = m.enclosing_function(expr);
        // find the class of the method (walk out of nested functions)
        while (f && !f->cls) f = f->outer;
        if (f && f->cls) {
          if (Function* meth = f->cls->find_method(a)) {
            r.kind = Resolved::Kind::Function;
            r.fn = meth;
            return r;
          }
          auto it = f->cls->attr_values.find(a);
          if (it != f->cls->attr_values.end() && it->second.size() == 1 && it->second[0] != kNone &&
              t.is(it->second[0], K::Call)) {
            NodeId callee = t.field(it->second[0], F::Function);
            Resolved c = resolve(m, callee, scope_at(m, it->second[0]), depth + 1);
            if (c.kind == Resolved::Kind::Class) {
              r.kind = Resolved::Kind::Instance;
              r.cls = c.cls;
            }
          } else if (it != f->cls->attr_values.end() && it->second.size() == 1 && it->second[0] != kNone &&
                     t.is(it->second[0], K::Identifier)) {
            // self.criterion = criterion, the parameter filled with an instance
            Resolved c = resolve(m, it->second[0], scope_at(m, it->second[0]), depth + 1);
            if (c.kind == Resolved::Kind::Instance) return c;
          }
        }
        return r;
      }
      Resolved base = resolve(m, obj, scope, depth + 1);
      switch (base.kind) {
        case Resolved::Kind::External:
          if (base.qname.rfind("builtins.", 0) == 0) return r;  // attribute of a local value
          r.kind = Resolved::Kind::External;
          r.qname = base.qname + "." + a;
          return r;
        case Resolved::Kind::Module: {
          if (auto* bs = base.mod->scope.find_local(a)) return from_bindings(*bs, *base.mod, a);
          // `import pkg.sub` then pkg.sub.f
          std::string q = base.mod->dotted + "." + a;
          return from_qname(q, *base.mod);
        }
        case Resolved::Kind::Class:
        case Resolved::Kind::Instance:
          if (Function* meth = base.cls->find_method(a)) {
            r.kind = Resolved::Kind::Function;
            r.fn = meth;
          }
          return r;
        default:
          return r;
      }
    }
    case K::ParenthesizedExpression: {
      NodeId in = t.first_named_child(expr);
      return resolve(m, in, scope, depth + 1);
    }
    default:
      return r;
  }
}

std::string ProgramModel::qualified_name(const Module& m, NodeId expr) const {
  Resolved r = resolve(m, expr, scope_at(m, expr), 0);
  return r.kind == Resolved::Kind::External ? r.qname : std::string();
}

Function* ProgramModel::resolve_function(const Module& m, NodeId expr) const {
  Resolved r = resolve(m, expr, scope_at(m, expr), 0);
  if (r.kind == Resolved::Kind::Function) return r.fn;
  return nullptr;
}

const Class* ProgramModel::class_of(const Module& m, NodeId class_def) const {
  for (auto& c : m.classes)
    if (c->def == class_def) return c.get();
  return nullptr;
}

const Loop* ProgramModel::loop_of(const Module& m, NodeId loop_node) const {
  auto it = m.loop_by_node.find(loop_node);
  return it == m.loop_by_node.end() ? nullptr : &m.loops[it->second];
}

bool ProgramModel::programs_use_accelerator(const Module& m) const {
  for (uint32_t p : m.programs)
    if (programs_[p].uses_accelerator) return true;
  return false;
}

bool ProgramModel::runs_in_accelerator_program(const Module& m, NodeId node) const {
  for (uint32_t p : m.programs)
    if (programs_[p].uses_accelerator && runs_in_program(programs_[p], m, node)) return true;
  return false;
}

bool ProgramModel::runs_in_training_accelerator_program(const Module& m, NodeId node) const {
  for (uint32_t p : m.programs)
    if (programs_[p].uses_accelerator && programs_[p].trains && runs_in_program(programs_[p], m, node)) return true;
  return false;
}

// ---- value facts ----------------------------------------------------------------------

namespace {
std::optional<Literal> literal_of(const Tree& t, NodeId n) {
  switch (t.kind(n)) {
    case K::Integer: {
      std::string s;
      for (char c : t.text(n))
        if (c != '_') s.push_back(c);
      try {
        size_t idx = 0;
        long long v = std::stoll(s, &idx, 0);
        if (idx == s.size()) return Literal{Literal::Kind::Int, std::to_string(v)};
      } catch (...) {
      }
      return Literal{Literal::Kind::Int, s};
    }
    case K::Float: return Literal{Literal::Kind::Float, std::string(t.text(n))};
    case K::True: return Literal{Literal::Kind::Bool, "True"};
    case K::False: return Literal{Literal::Kind::Bool, "False"};
    case K::None: return Literal{Literal::Kind::None, "None"};
    case K::String: {
      std::string_view s = t.text(n);
      if (!s.empty() && (s[0] == 'f' || s[0] == 'F')) return std::nullopt;
      return Literal{Literal::Kind::Str, string_literal_value(t, n)};
    }
    case K::UnaryOperator: {
      NodeId a = t.field(n, F::Argument);
      if (a == kNone) a = t.first_named_child(n);
      if (a != kNone && t.operator_text(n) == "-" && t.is(a, K::Integer)) {
        auto l = literal_of(t, a);
        if (l) l->text = "-" + l->text;
        return l;
      }
      return std::nullopt;
    }
    default: return std::nullopt;
  }
}
}  // namespace

ValueSet ProgramModel::eval(const Module& m, NodeId expr, int depth) const {
  ValueSet vs;
  const Tree& t = m.tree;
  if (expr == kNone || depth > 8) {
    vs.unknown = true;
    return vs;
  }
  if (auto l = literal_of(t, expr)) {
    vs.add(*l);
    return vs;
  }
  switch (t.kind(expr)) {
    case K::ParenthesizedExpression: return eval(m, t.first_named_child(expr), depth + 1);
    case K::ConditionalExpression: {
      auto kids = t.named_children(expr);
      if (kids.size() == 3) {
        vs.merge(eval(m, kids[0], depth + 1));
        vs.merge(eval(m, kids[2], depth + 1));
        return vs;
      }
      break;
    }
    case K::Call: {
      // int(x) / bool(x) keep x's value
      NodeId callee = t.field(expr, F::Function);
      std::string q = qualified_name(m, callee);
      if (q == "builtins.int" || q == "builtins.bool") {
        NodeId args = t.field(expr, F::Arguments);
        auto kids = args != kNone ? t.named_children(args) : std::vector<NodeId>{};
        if (kids.size() == 1) return eval(m, kids[0], depth + 1);
      }
      break;
    }
    case K::Identifier: {
      std::string_view name = t.text(expr);
      const Scope* scope = scope_at(m, expr);
      for (const Scope* s = scope; s; s = s->parent) {
        const Scope* look = s->globals.count(name) ? &m.scope : s;
        if (auto* bs = look->find_local(name)) {
          if (!look->fn && m.has_module_exec) break;  // configurator-style exec may overwrite globals
          for (auto& b : *bs) {
            if (b.kind == Binding::Kind::Assign && b.whole && b.value != kNone)
              vs.merge(eval(m, b.value, depth + 1));
            else
              vs.unknown = true;  // parameters, loop targets, imports, augmented assignment...
          }
          return vs;
        }
        if (look != s) break;
      }
      break;
    }
    case K::Attribute: {
      // args.num_workers: argparse defaults plus any assignment to the same attribute path
      NodeId obj = t.field(expr, F::Object), attr = t.field(expr, F::Attribute);
      if (obj == kNone || attr == kNone) break;
      std::string dest(t.text(attr));
      auto it = argdefs_.find(dest);
      if (it == argdefs_.end()) break;
      std::string root = dotted_text(t, obj);
      bool args_like = false;
      if (t.is(obj, K::Identifier)) {
        // bound to parse_args() somewhere, or a parameter carrying the parsed arguments
        const Scope* scope = scope_at(m, obj);
        for (const Scope* s = scope; s && !args_like; s = s->parent)
          if (auto* bs = s->find_local(t.text(obj))) {
            for (auto& b : *bs) {
              if (b.value != kNone && t.text(b.value).find("parse_") != std::string_view::npos) args_like = true;
              if (b.kind == Binding::Kind::Param) {
                static const char* names[] = {"args", "opt", "opts", "cfg", "config", "hparams", "flags", "FLAGS", "options", "a"};
                for (auto* nm : names)
                  if (t.text(obj) == nm) args_like = true;
              }
            }
            break;
          }
      }
      if (!args_like) break;
      // the options of the programs this code runs in: another script's `--workers` default (the
      // same name in a sibling script of the folder) is not a value here. Options declared only
      // outside them (a shared options module no program of this code imports) all count.
      bool any_shared = std::any_of(it->second.begin(), it->second.end(), [&](ArgDef* d) { return d->mod->shares_program(m); });
      for (ArgDef* d : it->second) {
        if (any_shared && !d->mod->shares_program(m)) continue;
        if (!d->has_default) {
          if (d->action == "store_true") vs.add(Literal{Literal::Kind::Bool, "False"});
          else if (d->action == "store_false") vs.add(Literal{Literal::Kind::Bool, "True"});
          else vs.add(Literal{Literal::Kind::None, "None"});
          continue;
        }
        // the default lives in the module that declared it
        vs.merge(eval(*d->mod, d->default_value, depth + 1));
      }
      return vs;
    }
    default: break;
  }
  vs.unknown = true;
  return vs;
}

NodeId ProgramModel::keyword_arg(const Module& m, const Call& c, std::string_view kw) const {
  const Tree& t = m.tree;
  NodeId args = t.field(c.node, F::Arguments);
  if (args == kNone) return kNone;
  for (NodeId a : t.named_child_range(args))
    if (t.is(a, K::KeywordArgument)) {
      NodeId k = t.field(a, F::Name);
      if (k != kNone && t.text(k) == kw) return t.field(a, F::Value);
    }
  return kNone;
}

NodeId ProgramModel::positional_arg(const Module& m, const Call& c, size_t i) const {
  const Tree& t = m.tree;
  NodeId args = t.field(c.node, F::Arguments);
  if (args == kNone) return kNone;
  size_t k = 0;
  for (NodeId a : t.named_child_range(args)) {
    K ak = t.kind(a);
    if (ak == K::KeywordArgument || ak == K::DictionarySplat) continue;
    if (ak == K::ListSplat) return kNone;
    if (k++ == i) return a;
  }
  return kNone;
}

size_t ProgramModel::positional_count(const Module& m, const Call& c) const {
  const Tree& t = m.tree;
  NodeId args = t.field(c.node, F::Arguments);
  if (args == kNone) return 0;
  size_t k = 0;
  for (NodeId a : t.named_child_range(args)) {
    K ak = t.kind(a);
    if (ak != K::KeywordArgument && ak != K::DictionarySplat) ++k;
  }
  return k;
}

bool ProgramModel::has_splat(const Module& m, const Call& c) const {
  const Tree& t = m.tree;
  NodeId args = t.field(c.node, F::Arguments);
  if (args == kNone) return false;
  for (NodeId a : t.named_child_range(args))
    if (t.is(a, K::ListSplat) || t.is(a, K::DictionarySplat)) return true;
  return false;
}

ValueSet ProgramModel::dict_key_values(const Module& m, NodeId d, std::string_view key, int depth) const {
  ValueSet vs;
  const Tree& t = m.tree;
  if (d == kNone || depth > 6) {
    vs.unknown = true;
    return vs;
  }
  switch (t.kind(d)) {
    case K::Dictionary: {
      bool found = false;
      for (NodeId p : t.named_child_range(d)) {
        if (t.is(p, K::Pair)) {
          NodeId k = t.field(p, F::Key), v = t.field(p, F::Value);
          if (k != kNone && t.is(k, K::String) && string_literal_value(t, k) == key) {
            vs = eval(m, v, depth + 1);  // a later key wins
            found = true;
          } else if (k != kNone && !t.is(k, K::String)) {
            vs.unknown = true;
          }
        } else if (t.is(p, K::DictionarySplat)) {
          ValueSet inner = dict_key_values(m, t.first_named_child(p), key, depth + 1);
          if (!inner.maybe_absent || inner.unknown || !inner.values.empty()) {
            if (!inner.maybe_absent) { vs = inner; found = true; }
            else vs.merge(inner);
          }
        }
      }
      if (!found && vs.values.empty() && !vs.unknown) vs.maybe_absent = true;
      return vs;
    }
    case K::Call: {
      NodeId callee = t.field(d, F::Function);
      if (qualified_name(m, callee) == "builtins.dict") {
        const Call* c = m.call_at(d);
        if (!c) break;
        NodeId v = keyword_arg(m, *c, key);
        if (v != kNone) return eval(m, v, depth + 1);
        if (has_splat(m, *c) || positional_count(m, *c) > 0) {
          vs.unknown = true;
          return vs;
        }
        vs.maybe_absent = true;
        return vs;
      }
      break;
    }
    case K::Identifier: {
      std::string_view name = t.text(d);
      const Scope* scope = scope_at(m, d);
      const Bindings* bs = nullptr;
      const Scope* owner = nullptr;
      for (const Scope* s = scope; s && !bs; s = s->parent) {
        bs = s->find_local(name);
        owner = s;
      }
      if (!bs) break;
      bool any = false;
      for (auto& b : *bs) {
        if (b.kind == Binding::Kind::Assign && b.whole && b.value != kNone) {
          vs.merge(dict_key_values(m, b.value, key, depth + 1));
          any = true;
        } else {
          vs.unknown = true;
        }
      }
      if (!any) vs.unknown = true;
      // name.update(...) and name['key'] = v in the same scope add possibilities
      for (auto& c : m.calls) {
        if (c.method != "update" || c.receiver == kNone || !t.is(c.receiver, K::Identifier) || t.text(c.receiver) != name)
          continue;
        if (scope_at(m, c.node) != owner) continue;
        NodeId a0 = positional_arg(m, c, 0);
        ValueSet u;
        if (a0 != kNone) u = dict_key_values(m, a0, key, depth + 1);
        NodeId kv = keyword_arg(m, c, key);
        if (kv != kNone) u = eval(m, kv, depth + 1);
        if (u.unknown) vs.unknown = true;
        for (auto& v : u.values) vs.add(v);
      }
      return vs;
    }
    default: break;
  }
  vs.unknown = true;
  return vs;
}

ValueSet ProgramModel::keyword_values(const Module& m, const Call& c, std::string_view kw, int pos) const {
  const Tree& t = m.tree;
  NodeId v = keyword_arg(m, c, kw);
  if (v != kNone) return eval(m, v, 0);
  if (pos >= 0) {
    NodeId p = positional_arg(m, c, static_cast<size_t>(pos));
    if (p != kNone) return eval(m, p, 0);
  }
  ValueSet vs;
  NodeId args = t.field(c.node, F::Arguments);
  bool absent = true;
  if (args != kNone)
    for (NodeId a : t.named_child_range(args)) {
      if (t.is(a, K::DictionarySplat)) {
        ValueSet d = dict_key_values(m, t.first_named_child(a), kw, 0);
        if (!d.maybe_absent) absent = false;
        d.maybe_absent = false;
        vs.merge(d);
      } else if (t.is(a, K::ListSplat) && pos >= 0) {
        vs.unknown = true;
      }
    }
  vs.maybe_absent = absent;
  return vs;
}

namespace {
thread_local int g_origins_depth = 0;  // factories followed through their returns, bounded
}  // namespace

std::vector<std::string> ProgramModel::origins(const Module& m, NodeId expr, uint32_t before) const {
  std::vector<std::string> out;
  const Tree& t = m.tree;
  if (expr == kNone) return out;
  // The calls a value comes from: `DP(model)`, `DP(model).to(device)` (methods that return
  // their receiver keep its origin), either branch of `a if c else b`.
  std::function<void(const Module&, NodeId, int)> of_value = [&](const Module& mm, NodeId v, int depth) {
    if (v == kNone || depth > 6) return;
    const Tree& tt = mm.tree;
    if (tt.is(v, K::ConditionalExpression)) {
      auto kids = tt.named_children(v);
      if (kids.size() == 3) {
        of_value(mm, kids[0], depth + 1);
        of_value(mm, kids[2], depth + 1);
      }
      return;
    }
    if (tt.is(v, K::ParenthesizedExpression)) return of_value(mm, tt.first_named_child(v), depth + 1);
    if (!tt.is(v, K::Call)) return;
    NodeId callee = tt.field(v, F::Function);
    if (callee != kNone && tt.is(callee, K::Attribute)) {
      NodeId obj = tt.field(callee, F::Object), attr = tt.field(callee, F::Attribute);
      if (obj != kNone && attr != kNone && tt.is(obj, K::Call)) {
        auto a = tt.text(attr);
        if (a == "to" || a == "cuda" || a == "cpu" || a == "half" || a == "float" || a == "double" ||
            a == "bfloat16" || a == "train" || a == "eval" || a == "requires_grad_")
          return of_value(mm, obj, depth + 1);
      }
    }
    Resolved r = resolve(mm, callee, scope_at(mm, callee), 0);
    if (r.kind == Resolved::Kind::External) out.push_back(r.qname);
    else if (r.kind == Resolved::Kind::Class) out.push_back("class:" + r.cls->qualname);
    else if (r.kind == Resolved::Kind::Function && r.fn && r.fn->body != kNone && g_origins_depth < 4) {
      // an analysed factory (`build_dataset(...)`, `get_model()`): what its returns come from
      ++g_origins_depth;
      const Tree& ft = r.fn->mod->tree;
      std::vector<NodeId> stack{r.fn->body};
      while (!stack.empty()) {
        NodeId x = stack.back();
        stack.pop_back();
        if (ft.is(x, K::FunctionDefinition) || ft.is(x, K::ClassDefinition) || ft.is(x, K::Lambda)) continue;
        if (ft.is(x, K::ReturnStatement)) {
          NodeId rv = ft.first_named_child(x);
          if (rv != kNone && !ft.is(rv, K::ExpressionList) && !ft.is(rv, K::Tuple))
            for (auto& o : origins(*r.fn->mod, rv)) out.push_back(o);
          continue;
        }
        for (NodeId ch = ft.first_child(x); ch != kNone; ch = ft.next_sibling(ch))
          if (ft[ch].named) stack.push_back(ch);
      }
      --g_origins_depth;
    }
  };
  if (t.is(expr, K::Identifier)) {
    std::string_view name = t.text(expr);
    for (const Scope* s = scope_at(m, expr); s; s = s->parent)
      if (auto* bs = s->find_local(name)) {
        for (auto& b : *bs) {
          if (b.kind == Binding::Kind::Assign && !b.whole && b.stmt != kNone && b.value != kNone &&
              t.is(b.value, K::Call)) {
            // `train_dl, valid_dl = get_data(opts)`: the element of what get_data returns
            tuple_element_origins(m, b.stmt, name, b.value, out);
            continue;
          }
          if (!((b.kind == Binding::Kind::Assign || b.kind == Binding::Kind::WithTarget) && b.whole)) continue;
          if (before != UINT32_MAX && b.stmt != kNone && t[b.stmt].start >= before && s->fn == m.enclosing_function(expr))
            continue;  // bound after the use, in the same straight-line scope
          of_value(m, b.value, 0);
        }
        break;
      }
  } else if (t.is(expr, K::Attribute)) {
    NodeId obj = t.field(expr, F::Object), attr = t.field(expr, F::Attribute);
    if (obj != kNone && attr != kNone && t.is(obj, K::Identifier) && t.text(obj) == "self") {
      Function* f = m.enclosing_function(expr);
      while (f && !f->cls) f = f->outer;
      if (f && f->cls) {
        auto it = f->cls->attr_values.find(t.text(attr));
        if (it != f->cls->attr_values.end())
          for (NodeId v : it->second) of_value(m, v, 0);
      }
    }
  } else {
    of_value(m, expr, 0);
  }
  return out;
}

void ProgramModel::tuple_element_origins(const Module& m, NodeId assign, std::string_view name, NodeId call,
                                         std::vector<std::string>& out) const {
  const Tree& t = m.tree;
  NodeId left = t.field(assign, F::Left);
  if (left == kNone || !(t.is(left, K::PatternList) || t.is(left, K::TuplePattern))) return;
  auto els = t.named_children(left);
  size_t index = els.size();
  for (size_t i = 0; i < els.size(); ++i)
    if (t.is(els[i], K::Identifier) && t.text(els[i]) == name) index = i;
  if (index == els.size()) return;
  const Call* c = m.call_at(call);
  if (!c || !c->target || c->target->body == kNone) return;
  // bounded like the factories `origins` follows: a recursive function's returns name what its
  // own recursive call bound (`value, slices = _collate(...)` ... `return value, slices`)
  if (g_origins_depth >= 4) return;
  ++g_origins_depth;
  struct Leave {
    ~Leave() { --g_origins_depth; }
  } leave;
  const Function& f = *c->target;
  const Tree& ft = f.mod->tree;
  std::vector<NodeId> stack{f.body};
  while (!stack.empty()) {
    NodeId x = stack.back();
    stack.pop_back();
    if (ft.is(x, K::FunctionDefinition) || ft.is(x, K::ClassDefinition) || ft.is(x, K::Lambda)) continue;
    if (ft.is(x, K::ReturnStatement)) {
      NodeId v = ft.first_named_child(x);
      if (v != kNone && (ft.is(v, K::ExpressionList) || ft.is(v, K::Tuple))) {
        auto rets = ft.named_children(v);
        if (index < rets.size())
          for (auto& o : origins(*f.mod, rets[index])) out.push_back(o);
      }
      continue;
    }
    for (NodeId ch = ft.first_child(x); ch != kNone; ch = ft.next_sibling(ch))
      if (ft[ch].named) stack.push_back(ch);
  }
}

namespace {
constexpr size_t kScanNames = 8;  // a scope binding at most this many names is searched by a scan

// An open-addressing table of ScopeNames entries (entry + 1 by slot, 0 for a free slot), with room
// for `n` names at most half full.
std::vector<uint32_t> name_table(size_t n) {
  size_t cap = 16;
  while (cap < 2 * n) cap <<= 1;
  return std::vector<uint32_t>(cap, 0);
}

// The slot of `name` in `table`: the one holding it, else the free one where it would go.
size_t slot_of(const std::vector<uint32_t>& table, const std::vector<ScopeNames::Entry>& entries, std::string_view name) {
  const size_t mask = table.size() - 1;
  size_t h = name_hash(name) & mask;
  while (table[h] && entries[table[h] - 1].first != name) h = (h + 1) & mask;
  return h;
}
}

void ScopeNames::seal() {
  if (pending_.empty()) return;  // sealed already, and nothing added since
  auto pending = std::move(pending_);
  pending_ = {};
  if (!entries_.empty()) {  // sealed before: what it held comes first, as it was bound first
    std::vector<std::pair<std::string_view, Binding>> all;
    all.reserve(bindings_.size() + pending.size());
    for (auto& e : entries_)
      for (auto& b : e.second) all.emplace_back(e.first, b);
    for (auto& p : pending) all.push_back(std::move(p));
    pending = std::move(all);
  }
  bindings_.clear();
  entries_.clear();
  index_.clear();
  if (pending.empty()) return;
  // each binding's name, numbered in the order names are first bound
  std::vector<uint32_t> slots = name_table(pending.size());
  std::vector<uint32_t> entry_of(pending.size()), count;
  for (size_t i = 0; i < pending.size(); ++i) {
    const std::string_view name = pending[i].first;
    const size_t h = slot_of(slots, entries_, name);
    if (!slots[h]) {
      entries_.push_back({name, {}});
      count.push_back(0);
      slots[h] = static_cast<uint32_t>(entries_.size());
    }
    entry_of[i] = slots[h] - 1;
    ++count[entry_of[i]];
  }
  // the bindings of each name together, in the order they were made
  std::vector<uint32_t> next(entries_.size());
  for (uint32_t e = 0, at = 0; e < entries_.size(); ++e) {
    next[e] = at;
    at += count[e];
  }
  bindings_.resize(pending.size());
  for (size_t i = 0; i < pending.size(); ++i) bindings_[next[entry_of[i]]++] = std::move(pending[i].second);
  for (uint32_t e = 0; e < entries_.size(); ++e)
    entries_[e].second = Bindings(bindings_.data() + (next[e] - count[e]), count[e]);
  entries_.shrink_to_fit();
  if (entries_.size() <= kScanNames) return;
  index_ = name_table(entries_.size());
  for (uint32_t e = 0; e < entries_.size(); ++e) index_[slot_of(index_, entries_, entries_[e].first)] = e + 1;
}

const Bindings* ScopeNames::find(std::string_view name) const {
  if (index_.empty()) {
    for (auto& e : entries_)
      if (e.first == name) return &e.second;
    return nullptr;
  }
  const uint32_t k = index_[slot_of(index_, entries_, name)];
  return k ? &entries_[k - 1].second : nullptr;
}

const Bindings* ProgramModel::bindings_of(const Module& m, NodeId id) const {
  if (id == kNone || !m.tree.is(id, K::Identifier)) return nullptr;
  std::string_view name = m.tree.text(id);
  for (const Scope* s = scope_at(m, id); s; s = s->parent) {
    const Scope* look = s->globals.count(name) ? &m.scope : s;
    if (auto* bs = look->find_local(name)) return bs;
  }
  return nullptr;
}

const Class* ProgramModel::instance_class(const Module& m, NodeId expr) const {
  Resolved r = resolve(m, expr, scope_at(m, expr), 0);
  return r.kind == Resolved::Kind::Instance ? r.cls : nullptr;
}

}  // namespace tl::py
