// TL304 eval-without-no-grad (C++): an evaluation step loop that runs the model with no
// torch::NoGradGuard (or AutoGradMode(false), InferenceMode) in scope.
#include "rules/cpp/common.h"
#include "rules/cpp/rules.h"

namespace tl::cpp {
namespace {

bool eval_name(std::string n) {
  for (auto& ch : n) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return n.find("validat") != std::string::npos || n.find("evaluat") != std::string::npos || n == "test" ||
         n == "eval" || n == "val" || n.starts_with("test_") || n.starts_with("eval_") || n.starts_with("val_");
}

// A grad guard declared in function `fn` whose block holds byte `at`.
bool guard_in_scope(const Model& m, uint32_t tu, int32_t fn, uint32_t at) {
  for (uint32_t i : m.locals(fn)) {
    const Variable& v = m.variables()[i];
    if (v.tu == tu && v.type.kind == TypeKind::GradGuard && v.decl.begin < at && at <= v.scope_end) return true;
  }
  return false;
}

bool runs_model(const CallSite& c) {
  return c.holder_call || (c.method == "forward" && (c.receiver_type.kind == TypeKind::ModuleHolder ||
                                                     c.receiver_type.kind == TypeKind::Module));
}

}  // namespace

void check_eval_without_no_grad(RuleContext& ctx) {
  const Model& m = ctx.model;
  for (auto& l : m.loops()) {
    if (l.tu != ctx.tu.index || l.kind != LoopKind::EvaluationStep || l.function < 0) continue;
    const Function& fn = m.functions()[l.function];
    bool eval_fn = eval_name(fn.name);
    for (uint32_t cid : fn.calls) {
      const CallSite& c = m.calls()[cid];
      if (c.method == "eval" && c.args.empty() && c.range.begin < l.range.begin) eval_fn = true;
    }
    if (!eval_fn) continue;
    const CallSite* first = nullptr;
    for (uint32_t cid : fn.calls) {
      const CallSite& c = m.calls()[cid];
      if (c.range.begin < l.range.begin || c.range.end > l.range.end || !runs_model(c)) continue;
      if (guard_in_scope(m, c.tu, c.function, c.range.begin)) continue;
      first = &c;
      break;
    }
    if (!first) continue;
    // a guard around every call of the function (`{ torch::NoGradGuard g; test(model, loader); }`)
    bool guarded_by_callers = !fn.callers.empty();
    for (uint32_t k : fn.callers) {
      const CallSite& caller = m.calls()[k];
      if (!guard_in_scope(m, caller.tu, caller.function, caller.range.begin)) guarded_by_callers = false;
    }
    if (guarded_by_callers) continue;
    ctx.report(*first,
               "the evaluation loop runs the model with autograd on: every forward pass records the graph and keeps "
               "activations alive for a backward that never comes; declare `torch::NoGradGuard no_grad;` before the "
               "loop",
               {ctx.note_at(l.tu, l.header, "this evaluation step loop")});
  }
}

}  // namespace tl::cpp
