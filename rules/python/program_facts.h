// Helpers for program-level rules (TL303, TL501, TL502, TL504): facts over the modules of one
// program, and the anchor a program-level finding points at.
#pragma once
#include <functional>

#include "rules/python/common.h"

namespace tl::rules {

struct Anchor {
  const py::Module* mod = nullptr;
  const py::Call* call = nullptr;
};

// The step loop's `.backward()` of the program's entry script (docs/concepts.md "Where a finding
// points"); when the entry script has none, the first one reached every step in the program.
// None for an entry that only defines things (Module::defines_only) whose loop is a class's method:
// a library component, no program.
Anchor backward_anchor(const py::ProgramModel& model, const py::Program& p);

// The programs whose entry script is `m` (program-level rules run once, at the entry).
std::vector<const py::Program*> programs_entered_at(const py::ProgramModel& model, const py::Module& m);

// Facts count only the code the program runs (docs/concepts.md "Program"): the top level of its members
// and the functions reachable from the entry script.
bool any_call(const py::ProgramModel& model, const py::Program& p,
              const std::function<bool(const py::Module&, const py::Call&)>& pred);
bool any_assignment(const py::ProgramModel& model, const py::Program& p,
                    const std::function<bool(const py::Module&, py::NodeId)>& pred);
bool imports_prefix(const py::Program& p, std::string_view prefix);

}  // namespace tl::rules
