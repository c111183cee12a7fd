// The rule registry: one explicit, sorted table of every code (rules/registry.cpp).
// Reporters, `trainlint rules`, `explain`, SARIF and the LSP read rule metadata from here.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/core/finding.h"
#include "analyzer/python/model.h"

namespace tl {

struct RuleInfo;

// What a rule sees: the model, the module being checked, and a way to report.
class RuleContext {
 public:
  RuleContext(const py::ProgramModel& model, const py::Module& mod, const RuleInfo& rule, std::vector<Finding>& out)
      : model(model), mod(mod), tree(mod.tree), rule(rule), out_(out) {}

  const py::ProgramModel& model;
  const py::Module& mod;
  const py::Tree& tree;
  const RuleInfo& rule;

  void report(py::NodeId node, std::string message, std::vector<Note> notes = {});
  // Program-level rules report at an anchor that may lie in another module of the program.
  void report_at(const py::Module& m, py::NodeId node, std::string message, std::vector<Note> notes = {});
  // Reports a per-step finding with notes pointing at the step loop and the call chain.
  void report_per_step(py::NodeId node, std::string message, const py::StepContext& sc);
  static Note note_at(const py::Module& m, py::NodeId n, std::string message);
  static Range range_of(const py::Module& m, py::NodeId n);

 private:
  std::vector<Finding>& out_;
};

using CheckFn = void (*)(RuleContext&);

struct RuleInfo {
  std::string_view code;
  std::string_view slug;
  Severity severity;
  std::string_view languages;
  std::string_view summary;  // one line
  std::string_view probe;    // how `trainlint run` measures the cost: site, data-wait, ...
  CheckFn check;             // null: the rule is in the catalog but not implemented for Python
};

const std::vector<RuleInfo>& registry();
// By code ("TL101") or slug ("gc-collect-per-step"); null if unknown.
const RuleInfo* find_rule(std::string_view code_or_slug);
std::string_view rule_doc(std::string_view code);  // the rule's Markdown doc, or empty

}  // namespace tl
