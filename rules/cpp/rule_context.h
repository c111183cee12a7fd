// What a C++ rule sees: the C++ program model, the translation unit being checked, the rule's
// metadata, and a way to report. Rules read only the model (analyzer/cpp/model.h), never a
// syntax tree, so the fast and the typed front end share them.
#pragma once
#include <string>
#include <vector>

#include "analyzer/core/finding.h"
#include "analyzer/cpp/model.h"

namespace tl {
struct RuleInfo;
}

namespace tl::cpp {

class RuleContext {
 public:
  RuleContext(const Model& model, const TranslationUnit& tu, const RuleInfo& rule, std::vector<Finding>& out)
      : model(model), tu(tu), rule(rule), out_(out) {}

  const Model& model;
  const TranslationUnit& tu;
  const RuleInfo& rule;

  // Is the site in the translation unit being checked?
  bool here(const Site& s) const { return s.tu == tu.index; }

  // Reports `range` of the TU being checked (its statement is the range itself). Each report
  // returns the finding it added (valid until the next report).
  Finding& report(const Range& range, std::string message, std::vector<Note> notes = {});
  // Reports a site (of any TU of the run: program-level rules point into the entry file): the
  // site's range, its statement for suppressions and fingerprints, its function as the scope.
  Finding& report(const Site& site, std::string message, std::vector<Note> notes = {});
  // A per-step finding: a note at the step loop ("runs every iteration of this training step
  // loop") and one at each call from the step loop down to the site's function.
  Finding& report_per_step(const Site& site, std::string message, const StepContext& sc);
  Note note_at(uint32_t tu_index, const Range& range, std::string message) const;

 private:
  std::vector<Finding>& out_;
};

using CheckFn = void (*)(RuleContext&);

}  // namespace tl::cpp
