#include "rules/python/program_facts.h"
#include <algorithm>

namespace tl::rules {

Anchor backward_anchor(const py::ProgramModel& model, const py::Program& p) {
  auto is_backward = [](const py::Call& c) { return py::ProgramModel::is_backward(c); };
  // The first backward (in source order) inside a training step loop, guarded or not; else
  // the first one reached every step through calls or hooks.
  auto in_module = [&](const py::Module& m) -> Anchor {
    for (auto& c : m.calls) {
      if (!is_backward(c) || !model.runs_in_program(p, m, c.node)) continue;
      for (const py::Loop* L = model.enclosing_loop(m, c.node); L; L = L->parent >= 0 ? &m.loops[L->parent] : nullptr)
        if (L->kind == py::LoopKind::TrainStep) return {&m, &c};
    }
    // reached from a step loop or hook of this program: a shared helper (a loss scaler's
    // `__call__`) reached only from another program's loop does not make this one train
    auto member = [&](const py::Module* x) { return std::find(p.members.begin(), p.members.end(), x) != p.members.end(); };
    for (auto& c : m.calls) {
      if (!is_backward(c) || !model.runs_in_program(p, m, c.node)) continue;
      auto sc = model.runs_every_step(m, c.node);
      if (sc && sc->kind == py::LoopKind::TrainStep && member(sc->loop_mod)) return {&m, &c};
      for (const py::Module* lm : p.members)
        for (auto& L : lm->loops)
          if (L.kind == py::LoopKind::TrainStep && model.runs_every_step_of(m, c.node, *lm, L.node)) return {&m, &c};
    }
    return {};
  };
  // An entry that only defines things (a library file nothing analysed imports) whose training
  // loop is a class's method (a `Trainer.train`, a pipeline's `__call__`): a component its users'
  // scripts, outside the analysis, build and run; no program to judge as a whole. A top-level
  // `def train(...)` linted alone is still judged.
  auto library_component = [&](const Anchor& a) {
    if (!p.entry || !p.entry->defines_only || !a.call) return false;
    for (const py::Function* f = a.call->fn; f; f = f->outer)
      if (f->cls) return true;
    return false;
  };
  if (p.entry) {
    Anchor a = in_module(*p.entry);
    if (a.call) return library_component(a) ? Anchor{} : a;
  }
  for (const py::Module* m : p.members) {
    if (m == p.entry) continue;
    Anchor a = in_module(*m);
    if (a.call) return library_component(a) ? Anchor{} : a;
  }
  return {};
}

std::vector<const py::Program*> programs_entered_at(const py::ProgramModel& model, const py::Module& m) {
  std::vector<const py::Program*> out;
  for (uint32_t id : m.programs) {
    const py::Program& p = model.programs()[id];
    if (p.entry == &m) out.push_back(&p);
  }
  return out;
}

bool any_call(const py::ProgramModel& model, const py::Program& p,
              const std::function<bool(const py::Module&, const py::Call&)>& pred) {
  for (const py::Module* m : p.members)
    for (auto& c : m->calls)
      if (model.runs_in_program(p, *m, c.node) && pred(*m, c)) return true;
  return false;
}

bool any_assignment(const py::ProgramModel& model, const py::Program& p,
                    const std::function<bool(const py::Module&, py::NodeId)>& pred) {
  for (const py::Module* m : p.members)
    for (py::NodeId a : m->assignments)
      if (model.runs_in_program(p, *m, a) && pred(*m, a)) return true;
  return false;
}

bool imports_prefix(const py::Program& p, std::string_view prefix) {
  for (const py::Module* m : p.members)
    for (auto& q : m->imported_modules)
      if (q == prefix || (q.size() > prefix.size() && q.compare(0, prefix.size(), prefix) == 0 && q[prefix.size()] == '.'))
        return true;
  return false;
}

}  // namespace tl::rules
