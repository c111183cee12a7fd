// The probe plan: which script a command runs, the static findings of that script's program, and
// the plan JSON the bootstrap reads (docs/runtime-protocol.md, "Probe plan").
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analyzer/engine/engine.h"
#include "analyzer/runtime/measure.h"

namespace tl::runtime {

struct ScriptChoice {
  std::string script;  // as written in the command (relative or absolute)
  std::string error;   // non-empty: why no script could be chosen
};

// The script of a command line: after a Python interpreter (`python3 [options] train.py`), the
// first argument that is not an interpreter option; a program that is itself a `.py` file; or,
// after any other launcher (`torchrun`, `accelerate launch`), the first `*.py` argument.
// `-m module` and `-c code` are refused with a message.
ScriptChoice find_script(const std::vector<std::string>& argv);

// Is `program` (a path or name) a Python interpreter: python, python3, python3.11, pypy3...?
bool is_python_interpreter(const std::string& program);

// Where runtime-only findings (TL901-TL903) point: the program's training step loop.
struct Anchor {
  std::string path;  // as the findings spell paths
  Range range;
};

struct Plan {
  LintResult lint;               // the script's program only: findings filtered, model kept
  std::vector<PlanSite> sites;   // one per finding, same order, id = index
  std::string script_display;    // the script as findings spell its path
  std::string script_abs;
  Anchor anchor;
  bool script_found = false;     // the script was among the analysed modules
  // What marks a training step at run time: "optimizer" (Optimizer.step / GradScaler.step), or
  // "backward" when the program has backward calls but no optimizer step the analysis can see
  // (a hand-written SGD update: `p.data.add_(p.grad, alpha=-lr)`).
  // "loop" when it has neither: a step is one iteration of the training loop (when that loop
  // iterates a DataLoader).
  std::string step_marker = "optimizer";
  // The training loop's `for` (absolute path, line); empty when the analysis found none.
  std::string step_loop_path;
  uint32_t step_loop_line = 0;
};

// Lints the script's folder tree and keeps the findings of the program(s) whose entry is the
// script (the script plus the analysed modules it imports, transitively).
Plan build_plan(const std::string& script, const LintOptions& opts);

// The qualified name of the call a finding points at (`gc.collect`, `.item`), or nullopt. A
// function or class of `entry` (the script Python runs as `__main__`) is `__main__.Qual.name`.
std::optional<std::string> callee_of(const py::ProgramModel& model, const Finding& f,
                                     const py::Module* entry = nullptr);

// The lines (first, last) of the statement that a call runs in, when it is timed as a unit: the
// whole `with` statement whose item holds the call (a body without loops), or a simple statement
// in which another call encloses it or follows it. nullopt: the call alone is its cost.
std::optional<std::pair<uint32_t, uint32_t>> statement_unit(const py::Module& m, py::NodeId call);

// Absolute, normalised form of a path (relative to the current folder).
std::string absolute_path(const std::string& p);

nlohmann::json plan_json(const std::vector<PlanSite>& sites, int64_t max_steps,
                         const std::string& step_marker = "optimizer", const std::string& step_loop_path = "",
                         uint32_t step_loop_line = 0);

// What `trainlint run` says before the program starts when --max-steps N cannot count what it
// usually counts (no optimizer step, no backward()); empty when it can.
std::string max_steps_notice(const Plan& plan, int64_t max_steps);

}  // namespace tl::runtime
