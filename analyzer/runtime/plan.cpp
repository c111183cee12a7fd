#include "analyzer/runtime/plan.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>
#include <tuple>
#include <unordered_set>

#include "rules/python/rule_context.h"
#include "rules/registry.h"

namespace fs = std::filesystem;

namespace tl::runtime {

std::string absolute_path(const std::string& p) {
  std::error_code ec;
  fs::path a = fs::absolute(fs::path(p), ec);
  if (ec) return p;
  return a.lexically_normal().string();
}

bool is_python_interpreter(const std::string& program) {
  std::string base = fs::path(program).filename().string();
  for (std::string_view pre : {"python", "pypy"})
    if (base.rfind(pre, 0) == 0) {
      std::string_view rest = std::string_view(base).substr(pre.size());
      // python, python3, python3.11, python3.11d, python3-dbg, pypy3
      return std::all_of(rest.begin(), rest.end(),
                         [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == 'd' || c == '-' || c == 'g' || c == 'b'; });
    }
  return false;
}

namespace {

bool ends_with(const std::string& s, std::string_view suf) {
  return s.size() >= suf.size() && s.compare(s.size() - suf.size(), suf.size(), suf) == 0;
}

}  // namespace

ScriptChoice find_script(const std::vector<std::string>& argv) {
  ScriptChoice c;
  if (argv.empty()) {
    c.error = "no program given: `trainlint run -- python3 train.py ARGS...`";
    return c;
  }
  const std::string& prog = argv[0];
  if (is_python_interpreter(prog)) {
    for (size_t i = 1; i < argv.size(); ++i) {
      const std::string& a = argv[i];
      if (a == "--") {
        if (i + 1 < argv.size()) c.script = argv[i + 1];
        break;
      }
      if (a == "-") {
        c.error = "the program reads its script from stdin (`-`): give the script as a file";
        return c;
      }
      if (a.size() >= 2 && a[0] == '-' && a[1] != '-') {
        // a cluster of one-letter options; -c/-m end it, -W/-X take an argument
        for (size_t k = 1; k < a.size(); ++k) {
          char o = a[k];
          if (o == 'm') {
            size_t next = k + 1 < a.size() ? i + 1 : i + 2;  // the first argument after the module's name
            std::string mod = k + 1 < a.size() ? a.substr(k + 1) : (i + 1 < argv.size() ? argv[i + 1] : "");
            // A launcher module (torch.distributed.run, accelerate's, cProfile, pdb) runs a script
            // given as an argument: that script is the program.
            for (size_t j = next; j < argv.size() && !mod.empty(); ++j)
              if (ends_with(argv[j], ".py") && argv[j][0] != '-') {
                c.script = argv[j];
                return c;
              }
            // A module of the working tree (`python -m src.train`): its file is the program.
            if (!mod.empty() && mod.find('/') == std::string::npos && mod.front() != '.') {
              std::string rel = mod;
              std::replace(rel.begin(), rel.end(), '.', '/');
              std::error_code ec;
              for (std::string cand : {rel + ".py", rel + "/__main__.py"})
                if (std::filesystem::is_regular_file(cand, ec)) {
                  c.script = cand;
                  return c;
                }
            }
            c.error = "`python -m " + mod +
                      "` is not supported by `trainlint run` (no module file of that name under the working folder, and no *.py argument): give the script's path (`python3 path/to/" +
                      (mod.empty() ? std::string("train") : mod.substr(mod.rfind('.') + 1)) + ".py`)";
            return c;
          }
          if (o == 'c') {
            c.error = "`python -c CODE` is not supported by `trainlint run`: put the code in a script file";
            return c;
          }
          if (o == 'W' || o == 'X') {
            if (k + 1 == a.size()) ++i;  // the argument is the next word
            break;
          }
        }
        continue;
      }
      if (a.rfind("--", 0) == 0) continue;  // --version and friends: the script, if any, follows
      c.script = a;
      break;
    }
    if (c.script.empty()) c.error = "no script after the Python interpreter: `trainlint run -- python3 train.py`";
    return c;
  }
  if (ends_with(prog, ".py")) {
    c.script = prog;
    return c;
  }
  for (size_t i = 1; i < argv.size(); ++i)
    if (ends_with(argv[i], ".py") && argv[i][0] != '-') {
      c.script = argv[i];
      return c;
    }
  c.error = "cannot tell which Python script `" + prog +
            "` runs: expected `trainlint run -- python3 train.py ARGS...` (or a launcher followed by a *.py file)";
  return c;
}

std::optional<std::string> callee_of(const py::ProgramModel& model, const Finding& f, const py::Module* entry) {
  // An analysed function or class is named by its module's dotted name, except in the entry
  // script: Python runs that file as `__main__`, so its classes are `__main__.Name` at run time.
  auto qualified = [entry](const py::Module* mod, const std::string& qualname) {
    if (mod == entry) return "__main__." + qualname;
    return mod->dotted.empty() ? qualname : mod->dotted + "." + qualname;
  };
  for (auto& m : model.modules()) {
    if (m->path != f.path) continue;
    const py::Call* best = nullptr;
    for (auto& c : m->calls) {
      const auto& n = m->tree[c.node];
      if (n.start != f.range.begin) continue;
      if (n.end == f.range.end) {
        best = &c;
        break;
      }
      // same start, other end (`a.b().c()`): the innermost call that starts there
      if (n.end >= f.range.end && (!best || n.end < m->tree[best->node].end)) best = &c;
    }
    if (!best) return std::nullopt;
    if (best->target_class && best->target_class->mod == entry) return qualified(entry, best->target_class->qualname);
    if (best->target && best->target->mod == entry) return qualified(entry, best->target->qualname);
    if (!best->qname.empty()) return std::string(best->qname);
    if (best->target_class) return qualified(best->target_class->mod, best->target_class->qualname);
    if (best->target) return qualified(best->target->mod, best->target->qualname);
    if (!best->method.empty()) return "." + std::string(best->method);
    return std::nullopt;
  }
  return std::nullopt;
}

namespace {

// The call node a finding points at (the innermost call starting at the finding), or kNone.
const py::Module* module_of(const py::ProgramModel& model, const std::string& path) {
  for (auto& m : model.modules())
    if (m->path == path) return m.get();
  return nullptr;
}

py::NodeId call_at(const py::Module& m, const Finding& f) {
  py::NodeId best = py::kNone;
  for (auto& c : m.calls) {
    const auto& n = m.tree[c.node];
    if (n.start != f.range.begin) continue;
    if (n.end == f.range.end) return c.node;
    if (n.end >= f.range.end && (best == py::kNone || n.end < m.tree[best].end)) best = c.node;
  }
  return best;
}

bool has_loop(const py::Tree& t, py::NodeId n) {
  for (py::NodeId k = n; k < t[n].subtree_end; ++k)
    if (t.is(k, py::K::ForStatement) || t.is(k, py::K::WhileStatement)) return true;
  return false;
}

}  // namespace

std::optional<std::pair<uint32_t, uint32_t>> statement_unit(const py::Module& m, py::NodeId call) {
  using py::K;
  const py::Tree& t = m.tree;
  if (call == py::kNone) return std::nullopt;
  py::NodeId n = call;
  for (py::NodeId p = t.parent(n); p != py::kNone; n = p, p = t.parent(p)) {
    switch (t.kind(p)) {
      case K::Lambda: case K::ListComprehension: case K::SetComprehension: case K::DictionaryComprehension:
      case K::GeneratorExpression: case K::FunctionDefinition: case K::ClassDefinition: case K::Block:
      case K::Module: case K::ForStatement: case K::WhileStatement: case K::IfStatement: case K::ElifClause:
        return std::nullopt;  // another frame, or a compound statement's header: the call alone
      case K::WithStatement: {
        // the call is one of the with's items: the block runs while its context is open
        py::NodeId body = t.field(p, py::F::Body);
        if (body != py::kNone && t.contains(body, call)) return std::nullopt;
        if (body != py::kNone && has_loop(t, body)) return std::nullopt;  // a whole loop is not one statement
        return std::make_pair(t.pos(p).line, t.source().line_col(t[p].end).line);
      }
      case K::ExpressionStatement: case K::ReturnStatement: case K::AssertStatement: case K::DeleteStatement:
      case K::RaiseStatement: {
        // more than the call runs in the statement: a call that encloses it (json.load(open(p)),
        // Image.open(p).convert(...)) or one that comes after it
        bool more = false;
        for (py::NodeId k = p; k < t[p].subtree_end && !more; ++k) {
          if (!t.is(k, K::Call) || k == call) continue;
          if (t.contains(k, call) || t[k].start >= t[call].end) more = true;
        }
        if (!more) return std::nullopt;
        return std::make_pair(t.pos(p).line, t.source().line_col(t[p].end).line);
      }
      default:
        break;
    }
  }
  return std::nullopt;
}

Plan build_plan(const std::string& script, const LintOptions& opts) {
  Plan plan;
  plan.script_abs = absolute_path(script);
  fs::path sp(script);
  std::string folder = sp.has_parent_path() ? sp.parent_path().string() : std::string(".");
  // The script's folder, its project as context, and every finding of the program reported
  // wherever it lies (the program's modules may be outside the folder).
  LintOptions o = opts;
  o.report_context = true;
  o.baseline = "-";  // a baselined finding still costs time: measure it
  LintResult all = lint_paths({folder, script}, o);
  plan.lint.config_errors = all.config_errors;
  plan.lint.configs = all.configs;
  plan.lint.root_config = all.root_config;
  plan.lint.files = all.files;
  plan.lint.messages = all.messages;
  plan.lint.io_error = all.io_error;
  plan.lint.model = all.model;
  plan.lint.files_analysed = all.files_analysed;
  if (!all.model) return plan;

  // The script's module, then its program(s).
  const py::Module* entry = nullptr;
  for (auto& m : all.model->modules())
    if (absolute_path(m->path) == plan.script_abs) entry = m.get();
  std::unordered_set<const py::Module*> members;
  if (entry) {
    plan.script_found = true;
    plan.script_display = entry->path;
    for (auto& p : all.model->programs())
      if (p.entry == entry)
        for (auto* x : p.members) members.insert(x);
    if (members.empty()) {  // imported elsewhere, no main guard: follow its imports ourselves
      std::vector<const py::Module*> q{entry};
      members.insert(entry);
      while (!q.empty()) {
        const py::Module* x = q.back();
        q.pop_back();
        for (auto* t : x->imports)
          if (members.insert(t).second) q.push_back(t);
      }
    }
  } else {
    plan.script_display = script;
  }
  std::unordered_set<std::string> member_paths;
  for (auto* m : members) member_paths.insert(m->path);
  for (auto& f : all.findings)
    if (member_paths.count(f.path)) plan.lint.findings.push_back(f);
  plan.lint.files_analysed = member_paths.size();

  for (size_t i = 0; i < plan.lint.findings.size(); ++i) {
    const Finding& f = plan.lint.findings[i];
    PlanSite s;
    s.id = static_cast<int64_t>(i);
    s.code = f.code;
    s.path = absolute_path(f.path);
    s.line = f.range.start.line;
    s.col = f.range.start.col;
    s.probe = f.probe;
    s.callee = callee_of(*all.model, f, entry);
    if (s.probe == "site" || s.probe == "site+memcpy")
      if (const py::Module* m = module_of(*all.model, f.path))
        if (auto u = statement_unit(*m, call_at(*m, f))) std::tie(s.unit_start, s.unit_end) = *u;
    plan.sites.push_back(std::move(s));
  }

  // The step marker: optimizer steps, unless the program shows backward calls and no optimizer step.
  bool opt_step = false, backward = false;
  for (auto* m : members)
    for (auto& c : m->calls) {
      opt_step = opt_step || all.model->is_optimizer_step(*m, c);
      // Lightning's manual_backward: its optimizer steps run inside Lightning, not in the program
      backward = backward || (py::ProgramModel::is_backward(c) && c.method != "manual_backward");
    }
  if (backward && !opt_step) plan.step_marker = "backward";
  if (!backward && !opt_step) plan.step_marker = "loop";  // the training loop's iterations, if any

  // The anchor of runtime-only findings: the training step loop (the script's first, else any
  // member's), else the script's first line.
  plan.anchor.path = plan.script_display;
  plan.anchor.range.start = plan.anchor.range.stop = {1, 1};
  auto find_loop = [&](const py::Module* m) -> bool {
    for (auto& l : m->loops)
      if (l.kind == py::LoopKind::TrainStep) {
        plan.anchor.path = m->path;
        plan.anchor.range = RuleContext::range_of(*m, l.node);
        plan.anchor.range.end = plan.anchor.range.begin;  // the loop's first token, not its body
        plan.anchor.range.stop = plan.anchor.range.start;
        plan.step_loop_path = absolute_path(m->path);
        plan.step_loop_line = plan.anchor.range.start.line;
        return true;
      }
    return false;
  };
  if (entry && !find_loop(entry)) {
    std::vector<const py::Module*> sorted(members.begin(), members.end());
    std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->path < b->path; });
    for (auto* m : sorted)
      if (m != entry && find_loop(m)) break;
  }
  return plan;
}

nlohmann::json plan_json(const std::vector<PlanSite>& sites, int64_t max_steps, const std::string& step_marker,
                         const std::string& step_loop_path, uint32_t step_loop_line) {
  nlohmann::json arr = nlohmann::json::array();
  for (auto& s : sites) {
    nlohmann::json j = {{"id", s.id},       {"code", s.code},   {"path", s.path}, {"line", s.line},
                        {"col", s.col},     {"probe", s.probe}, {"callee", nullptr}};
    if (s.callee) j["callee"] = *s.callee;
    if (s.unit_start) j["unit"] = {s.unit_start, s.unit_end};
    arr.push_back(std::move(j));
  }
  nlohmann::json j = {{"version", 1}, {"sites", arr}, {"max_steps", max_steps}, {"step_marker", step_marker}};
  if (!step_loop_path.empty()) j["step_loop"] = {{"path", step_loop_path}, {"line", step_loop_line}};
  return j;
}

std::string max_steps_notice(const Plan& plan, int64_t max_steps) {
  if (max_steps <= 0 || plan.step_marker != "loop") return "";
  std::string n = std::to_string(max_steps);
  if (plan.step_loop_path.empty())
    return "trainlint: --max-steps " + n +
           " cannot be honoured: the program has no optimizer step, no backward() and no training loop that the "
           "analysis can see, so it runs to its end\n";
  return "trainlint: the program has no optimizer step and no backward() that the analysis can see: --max-steps " + n +
         " counts iterations of the training loop at " + plan.anchor.path + ":" + std::to_string(plan.step_loop_line) +
         " (when it iterates a DataLoader; otherwise the program runs to its end)\n";
}

}  // namespace tl::runtime
